//! Edits of a text that must not touch its `{{ … }}` templates (a variable's name is no
//! literal to replace or encode): one walk over the template spans for every importer.

/// `text` with `edit` applied to what stands outside its `{{ … }}` templates (a literal must
/// not be replaced inside a variable's name).
pub fn outside_templates(text: &str, edit: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        out.push_str(&edit(&rest[..open]));
        out.push_str(&rest[open..open + close + 2]);
        rest = &rest[open + close + 2..];
    }
    out.push_str(&edit(rest));
    out
}
