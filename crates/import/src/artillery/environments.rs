//! Artillery's `config.environments`: named overrides of `config` (phases, target…) picked
//! with `artillery run --environment NAME`. loadlab has no such choice and `loadlab import`
//! has no option for one, so the top-level config is converted and the environments are
//! named — in the report and in `decide:` comments where they hold what the top level lacks
//! (a script whose load is only under `environments` would otherwise run 1 user once
//! without saying why).

use crate::lines::Lines;
use crate::report::Report;
use crate::yaml::Entry;
use serde_yaml_ng::Value;

/// Reports `config.environments` and, when the top-level config has no phases or target,
/// replaces the `decide:` comment of `load:` / `target:` in `entries` with one naming the
/// environments that set them.
pub fn note(config: &Value, entries: &mut [Entry], lines: &Lines, report: &mut Report) {
    let Some(envs) = config.get("environments").and_then(Value::as_mapping) else {
        return;
    };
    let names = |key: &str| -> Vec<String> {
        envs.iter()
            .filter(|(_, e)| e.get(key).is_some())
            .filter_map(|(n, _)| n.as_str().map(str::to_string))
            .collect()
    };
    let all: Vec<String> = envs
        .keys()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let with_phases = names("phases");
    let with_target = names("target");
    let mut what = format!(
        "config.environments ({}): Artillery applies one when run with --environment NAME; loadlab has none, so the top-level config was converted",
        all.join(", ")
    );
    let top_phases = config.get("phases").is_some();
    if !top_phases && !with_phases.is_empty() {
        what.push_str(" and the load is left to decide (the phases are only in the environments)");
        replace_decide(
            entries,
            "load",
            format!(
                "decide: the script's phases are only under config.environments ({}): copy the phases of the one you run (Artillery's --environment NAME) as stages here",
                with_phases.join(", ")
            ),
        );
    }
    if config.get("target").is_none() && !with_target.is_empty() {
        replace_decide(
            entries,
            "target",
            format!(
                "decide: the script's target is only under config.environments ({}): write the one you test",
                with_target.join(", ")
            ),
        );
    }
    report.unsupported(lines.find("environments", 1), what);
}

fn replace_decide(entries: &mut [Entry], key: &str, comment: String) {
    if let Some(e) = entries.iter_mut().find(|e| e.key == key) {
        e.comments.retain(|c| !c.starts_with("decide:"));
        e.comments.push(comment);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Node;

    #[test]
    fn environments_holding_the_load_are_named_where_it_is_decided() {
        let src = "target: http://a\nenvironments:\n  smoke: {phases: [{duration: 1, arrivalRate: 1}]}\n  load: {target: http://b, phases: []}\n  dev: {variables: {x: 1}}\n";
        let config: Value = serde_yaml_ng::from_str(src).unwrap();
        let mut entries = vec![
            Entry::new("target", Node::str("http://a")),
            crate::scaffold::one_user_once(
                "decide: the script has no config.phases; choose the load",
            ),
        ];
        let mut report = Report::default();
        note(&config, &mut entries, &Lines::new(src), &mut report);
        assert_eq!(
            entries[1].comments,
            ["decide: the script's phases are only under config.environments (smoke, load): copy the phases of the one you run (Artillery's --environment NAME) as stages here"]
        );
        assert!(
            entries[0].comments.is_empty(),
            "the top-level target stands"
        );
        assert_eq!(report.unsupported.len(), 1);
        assert_eq!(report.unsupported[0].line, Some(2));
        assert!(report.unsupported[0]
            .what
            .starts_with("config.environments (smoke, load, dev)"));
    }
}
