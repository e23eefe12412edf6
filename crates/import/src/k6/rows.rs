//! Data-row detection: which expressions read a row of a `SharedArray` (`users[__VU %
//! users.length]`, `randomItem(users)`), and how loadlab's `pick` reproduces the script's
//! indexing (with a note where it only approximates it).

use super::js::Expr;
use super::values::{Binding, Conv, PickNote, Scope};

impl Scope {
    /// The data set a row expression reads: a name bound to a row, or `set[index]`.
    pub fn row_of(&mut self, e: &Expr) -> Conv<Option<String>> {
        match e {
            Expr::Ident(n) => Ok(match self.lookup(n) {
                Some(Binding::Row(set)) => Some(set.clone()),
                _ => None,
            }),
            Expr::Index { object, index } => {
                // `users[i]`, or `loginData.users[i]` of a whole JSON file's set.
                let (n, field) = match object.as_ref() {
                    Expr::Ident(n) => (n, None),
                    Expr::Member { object, property } => match object.as_ref() {
                        Expr::Ident(n) => (n, Some(property)),
                        _ => return Ok(None),
                    },
                    _ => return Ok(None),
                };
                let Some(Binding::Data(set)) = self.lookup(n).cloned() else {
                    return Ok(None);
                };
                let local = match field {
                    Some(f) => {
                        if !self.set_fields.iter().any(|(s, _)| *s == set) {
                            self.set_fields.push((set.clone(), f.clone()));
                        }
                        format!("{n}.{f}")
                    }
                    None => n.clone(),
                };
                // `const rand = Math.floor(Math.random() * 2); users[rand]`.
                let index_name = index.as_ref();
                let index = match index.as_ref() {
                    Expr::Ident(i) => match self.lookup(i) {
                        Some(Binding::Value(v)) => v.clone(),
                        _ => index.as_ref().clone(),
                    },
                    other => other.clone(),
                };
                let mut note = self.pick(&set, &local, &index)?;
                if let Expr::Ident(i) = index_name {
                    note.note = self.paired(&set, i).or(note.note);
                }
                if !self.picks.iter().any(|p| p.set == set) {
                    self.picks.push(note);
                }
                Ok(Some(set))
            }
            Expr::Call { callee, args, .. }
                if callee.dotted().as_deref() == Some("randomItem") && args.len() == 1 =>
            {
                let Expr::Ident(n) = &args[0] else {
                    return Ok(None);
                };
                let Some(Binding::Data(set)) = self.lookup(n).cloned() else {
                    return Ok(None);
                };
                if !self.picks.iter().any(|p| p.set == set) {
                    self.picks.push(PickNote {
                        set: set.clone(),
                        pick: "random",
                        note: None,
                    });
                }
                Ok(Some(set))
            }
            _ => Ok(None),
        }
    }

    /// `names[rand]` then `passwords[rand]`: rows the script paired by one index, which
    /// loadlab's picks (one per set) do not keep together; said on the later set.
    fn paired(&mut self, set: &str, index: &str) -> Option<String> {
        let other = self
            .indexed_by
            .iter()
            .find(|(s, i)| s != set && i == index)
            .map(|(s, _)| s.clone());
        if !self.indexed_by.iter().any(|(s, _)| s == set) {
            self.indexed_by.push((set.to_string(), index.to_string()));
        }
        other.map(|o| format!(
            "decide: the script read `{o}` and `{set}` at the same index `{index}` (rows paired); loadlab picks each set's row apart: to keep them paired, make them one set with both columns"
        ))
    }

    /// How `set[index]` picks its row, in loadlab's words.
    fn pick(&self, set: &str, local: &str, index: &Expr) -> Conv<PickNote> {
        let exec = self.execution.clone().unwrap_or_else(|| "exec".into());
        let text = index_sketch(index);
        let modulo = |e: &Expr| -> Option<String> {
            match e {
                Expr::Binary { op, left, right } if op == "%" => {
                    let len = right.dotted()?;
                    if len != format!("{local}.length") {
                        return None;
                    }
                    let l = match left.as_ref() {
                        Expr::Binary { op, left, right }
                            if op == "-" && right.as_num().is_some() =>
                        {
                            left.as_ref()
                        }
                        other => other,
                    };
                    l.dotted()
                }
                _ => None,
            }
        };
        if let Some(by) = modulo(index).map(|by| self.execution_path(&by)) {
            let exact = [
                format!("{exec}.scenario.iterationInTest"),
                format!("{exec}.scenario.iterationInInstance"),
            ];
            if exact.contains(&by) {
                return Ok(PickNote {
                    set: set.into(),
                    pick: "sequential",
                    note: None,
                });
            }
            if by == "__VU" || by == format!("{exec}.vu.idInTest") || by == "__ITER" {
                return Ok(PickNote {
                    set: set.into(),
                    pick: "sequential",
                    note: Some(format!(
                        "the script picked the row `{text}` (by {by}); loadlab's `sequential` takes the next row at each iteration"
                    )),
                });
            }
        }
        if is_random_index(index, local) {
            return Ok(PickNote {
                set: set.into(),
                pick: "random",
                note: None,
            });
        }
        if let Some(n) = random_below(index) {
            return Ok(PickNote {
                set: set.into(),
                pick: "random",
                note: Some(format!(
                    "the script picked one of the first {} rows at random (`{text}`); loadlab's `random` reads any row",
                    crate::scaffold::fmt_num(n)
                )),
            });
        }
        if let Some(n) = index.as_num() {
            return Ok(PickNote {
                set: set.into(),
                pick: "sequential",
                note: Some(format!(
                    "the script always read row {}; loadlab reads every row in turn",
                    crate::scaffold::fmt_num(n)
                )),
            });
        }
        Err(format!(
            "the row `{local}[{text}]`: no loadlab pick reads it"
        ))
    }
}

/// `Math.floor(Math.random() * 2)`: the `2`.
fn random_below(e: &Expr) -> Option<f64> {
    let (name, args, _) = e.as_call()?;
    let Some(Expr::Binary { op, left, right }) = args.first() else {
        return None;
    };
    let random = |x: &Expr| {
        x.as_call()
            .is_some_and(|(n, a, _)| n == "Math.random" && a.is_empty())
    };
    if name != "Math.floor" || op != "*" {
        return None;
    }
    match (random(left), random(right)) {
        (true, false) => right.as_num(),
        (false, true) => left.as_num(),
        _ => None,
    }
}

/// `Math.floor(Math.random() * users.length)`.
fn is_random_index(e: &Expr, local: &str) -> bool {
    let Some((name, args, _)) = e.as_call() else {
        return false;
    };
    if name != "Math.floor" {
        return false;
    }
    let Some(Expr::Binary { op, left, right }) = args.first() else {
        return false;
    };
    let random = |x: &Expr| {
        x.as_call()
            .is_some_and(|(n, a, _)| n == "Math.random" && a.is_empty())
    };
    let len = |x: &Expr| x.dotted().is_some_and(|d| d == format!("{local}.length"));
    op == "*" && ((random(left) && len(right)) || (len(left) && random(right)))
}

fn index_sketch(e: &Expr) -> String {
    match e {
        Expr::Binary { op, left, right } => {
            format!("{} {op} {}", index_sketch(left), index_sketch(right))
        }
        other => other.sketch(),
    }
}
