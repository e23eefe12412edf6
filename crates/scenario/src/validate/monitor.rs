//! The `monitor:` section: one selector per process or cgroup, usable names, compilable
//! patterns, reachable-looking URLs and parseable series selectors, each error at its line.

use super::Ctx;
use crate::error::ScenarioError;
use crate::monitor::{
    is_valid_source_name, parse_series_selector, CgroupLocation, CgroupWatch, MonitorConfig,
    ProcessSelector, ProcessWatch, PrometheusWatch, SeriesSelector, MIN_MONITOR_INTERVAL,
};
use crate::raw::{RawCgroupWatch, RawMonitor, RawProcessWatch, RawPrometheusWatch};
use std::collections::HashSet;

pub(crate) fn monitor(raw: Option<RawMonitor>, ctx: &Ctx) -> Result<MonitorConfig, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(MonitorConfig::default());
    };
    let mut config = MonitorConfig::default();
    if let Some(interval) = raw.interval {
        if interval < MIN_MONITOR_INTERVAL {
            return Err(ctx
                .err("monitor.interval", "the interval must be at least 100ms")
                .with_hint("1s (the default) suits runs of a minute or more"));
        }
        config.interval = interval;
    }
    config.host = raw.host.unwrap_or(true);
    config.processes = processes(raw.processes, ctx)?;
    config.cgroups = cgroups(raw.cgroups, ctx)?;
    config.prometheus = prometheus(raw.prometheus, ctx)?;
    Ok(config)
}

/// `monitor.processes`: each named once and found by exactly one of pid, port or pattern.
fn processes(raw: Vec<RawProcessWatch>, ctx: &Ctx) -> Result<Vec<ProcessWatch>, ScenarioError> {
    let mut names = Names::default();
    let mut watches = Vec::new();
    for (i, p) in raw.into_iter().enumerate() {
        let field = format!("monitor.processes[{i}]");
        let name = names.check(ctx, &field, p.name, "processes")?;
        let selector = process_selector(&field, p.pid, p.port, p.pattern, ctx)?;
        watches.push(ProcessWatch { name, selector });
    }
    Ok(watches)
}

/// The one way given to find a process (`pid`, `port` or `match`).
fn process_selector(
    field: &str,
    pid: Option<u32>,
    port: Option<u16>,
    pattern: Option<String>,
    ctx: &Ctx,
) -> Result<ProcessSelector, ScenarioError> {
    let given = [pid.is_some(), port.is_some(), pattern.is_some()];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(ctx
            .err(field, "give exactly one of `pid`, `port` or `match`")
            .with_hint("e.g. `{ name: target, port: 8080 }`"));
    }
    Ok(if let Some(pid) = pid {
        if pid == 0 {
            return Err(ctx.err(&format!("{field}.pid"), "0 is not a process id"));
        }
        ProcessSelector::Pid(pid)
    } else if let Some(port) = port {
        if port == 0 {
            return Err(ctx.err(&format!("{field}.port"), "0 is not a TCP port"));
        }
        ProcessSelector::Port(port)
    } else {
        let pattern = pattern.unwrap_or_default();
        crate::monitor::flag::check_regex(&pattern)
            .map_err(|m| ctx.err(&format!("{field}.match"), m))?;
        ProcessSelector::Match(pattern)
    })
}

/// `monitor.cgroups`: each named once and found by exactly one of path or container.
fn cgroups(raw: Vec<RawCgroupWatch>, ctx: &Ctx) -> Result<Vec<CgroupWatch>, ScenarioError> {
    let mut names = Names::default();
    let mut watches = Vec::new();
    for (i, c) in raw.into_iter().enumerate() {
        let field = format!("monitor.cgroups[{i}]");
        let name = names.check(ctx, &field, c.name, "cgroups")?;
        let location = match (c.path, c.container) {
            (Some(path), None) => CgroupLocation::Path(
                crate::monitor::flag::check_cgroup_path(&path)
                    .map_err(|m| ctx.err(&format!("{field}.path"), m))?
                    .into(),
            ),
            (None, Some(id)) => CgroupLocation::Container(
                crate::monitor::flag::check_container_id(&id)
                    .map_err(|m| ctx.err(&format!("{field}.container"), m))?,
            ),
            _ => {
                return Err(ctx
                    .err(&field, "give exactly one of `path` or `container`")
                    .with_hint(
                        "e.g. `{ name: db, path: /sys/fs/cgroup/system.slice/mysql.service }`",
                    ))
            }
        };
        watches.push(CgroupWatch { name, location });
    }
    Ok(watches)
}

/// `monitor.prometheus`: each named once, with a URL and the series to record.
fn prometheus(
    raw: Vec<RawPrometheusWatch>,
    ctx: &Ctx,
) -> Result<Vec<PrometheusWatch>, ScenarioError> {
    let mut names = Names::default();
    let mut watches = Vec::new();
    for (i, p) in raw.into_iter().enumerate() {
        let field = format!("monitor.prometheus[{i}]");
        let name = names.check(ctx, &field, p.name, "prometheus")?;
        let url = p.url.ok_or_else(|| {
            ctx.err(&field, "missing `url`")
                .with_hint("e.g. `url: http://127.0.0.1:9100/metrics`")
        })?;
        let url = crate::addresses::check_target(&url)
            .map_err(|m| ctx.err(&format!("{field}.url"), m))?;
        if p.series.is_empty() {
            return Err(ctx
                .err(&field, "list the `series` to record")
                .with_hint("e.g. `series: [process_cpu_seconds_total, \"http_requests_total{code=\\\"500\\\"}\"]`"));
        }
        let series = series_selectors(&field, &p.series, ctx)?;
        watches.push(PrometheusWatch { name, url, series });
    }
    Ok(watches)
}

/// The series one Prometheus source records, each parsed and listed once.
fn series_selectors(
    field: &str,
    texts: &[String],
    ctx: &Ctx,
) -> Result<Vec<SeriesSelector>, ScenarioError> {
    let mut series: Vec<SeriesSelector> = Vec::new();
    for (j, text) in texts.iter().enumerate() {
        let selector =
            parse_series_selector(text).map_err(|m| ctx.err(&format!("{field}.series[{j}]"), m))?;
        if series.iter().any(|s| s.text == selector.text) {
            return Err(ctx.err(
                &format!("{field}.series[{j}]"),
                format!("`{text}` is listed twice"),
            ));
        }
        series.push(selector);
    }
    Ok(series)
}

/// Names already used in one list.
#[derive(Default)]
struct Names(HashSet<String>);

impl Names {
    fn check(
        &mut self,
        ctx: &Ctx,
        field: &str,
        name: Option<String>,
        list: &str,
    ) -> Result<String, ScenarioError> {
        let name = name.ok_or_else(|| {
            ctx.err(field, "missing `name`").with_hint(format!(
                "the name labels the series, e.g. `{list}.target.cpu_percent`"
            ))
        })?;
        let at = format!("{field}.name");
        if !is_valid_source_name(&name) {
            return Err(ctx.err(
                &at,
                format!("`{name}` is not a usable name: use letters, digits, `_` and `-`"),
            ));
        }
        if !self.0.insert(name.clone()) {
            return Err(ctx.err(&at, format!("`{name}` is used twice in `monitor.{list}`")));
        }
        Ok(name)
    }
}
