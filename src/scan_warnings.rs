//! The warnings of a velocity scan, each said once.
//!
//! Every member of a scan is planned on its own, so a warning that depends on the velocity (aliasing at the
//! slowest velocity, the depth the record reaches) comes once per member, with that member's figures. A
//! scan's log and manifest give each such warning once: warnings that differ only in their figures (and in
//! the member's suffix of a product's name) are one warning, said with the figures of the first member it
//! concerns and the members it concerns, or "every member".

use crate::velocity::ScanStep;

/// The warnings of the members of a scan (`step`, its warnings), in order, each once: a warning that every
/// member gives word for word is said as it is; one that only some members give, or that every member
/// gives with figures of its own, names the members.
pub fn merge(members: &[(Option<ScanStep>, Vec<String>)]) -> Vec<String> {
    // (pattern, [(member, text)]) in the order the patterns first appear.
    let mut groups: Vec<(String, Vec<(usize, &str)>)> = Vec::new();
    for (m, (step, warnings)) in members.iter().enumerate() {
        let suffix = step.map(|s| s.suffix()).unwrap_or_default();
        for w in warnings {
            let key = pattern(&without(w, &suffix));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, found)) if !found.iter().any(|&(i, _)| i == m) => found.push((m, w)),
                Some(_) => {}
                None => groups.push((key, vec![(m, w)])),
            }
        }
    }
    groups.into_iter().map(|(_, found)| said_once(members, &found)).collect()
}

/// One warning for the members `found` (member, its text) of a scan.
fn said_once(members: &[(Option<ScanStep>, Vec<String>)], found: &[(usize, &str)]) -> String {
    let (first, text) = found[0];
    let label = |m: usize| members[m].0.map(|s| s.label());
    let same_text = found.iter().all(|&(_, t)| t == text);
    let every = found.len() == members.len();
    let (Some(first_label), false) = (label(first), every && same_text) else { return text.to_string() };
    let text = if found.len() > 1 {
        without(text, &members[first].0.map(|s| s.suffix()).unwrap_or_default())
    } else {
        text.to_string()
    };
    let whose = if every {
        "velocity scan, every member".to_string()
    } else {
        let labels: Vec<String> = found.iter().filter_map(|&(m, _)| label(m)).collect();
        format!("velocity {}", labels.join(", "))
    };
    if same_text {
        format!("{whose}: {text}")
    } else {
        format!("{whose} (figures for {first_label}): {text}")
    }
}

/// `text` without a member's product suffix `suffix` (`_v090`).
fn without(text: &str, suffix: &str) -> String {
    if suffix.is_empty() {
        text.to_string()
    } else {
        text.replace(suffix, "")
    }
}

/// `text` with each number that stands on its own (not part of a name like `inline_122`) replaced by `#`.
fn pattern(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let digit = |j: usize| chars.get(j).is_some_and(|c| c.is_ascii_digit());
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let in_name = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if !in_name && (digit(i) || (chars[i] == '-' && digit(i + 1))) {
            i += 1;
            // A full stop after a number ends a sentence: only a point between digits is a decimal point.
            while digit(i) || (chars.get(i) == Some(&'.') && digit(i + 1)) {
                i += 1;
            }
            out.push('#');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(warnings: &[&[&str]]) -> Vec<(Option<ScanStep>, Vec<String>)> {
        warnings
            .iter()
            .zip([0.9, 1.0, 1.1])
            .map(|(w, f)| (Some(ScanStep::Scale(f)), w.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn figures_differ_names_do_not() {
        assert_eq!(pattern("bins 25.00 × 25.00 m: 4.4 m."), "bins # × # m: # m.");
        assert_eq!(pattern("inline_122 lies below -3 m"), "inline_122 lies below # m");
        assert_ne!(pattern("inline_122 lies"), pattern("inline_130 lies"));
    }

    #[test]
    fn each_warning_once_with_the_members_it_concerns() {
        let members = scan(&[
            &["bins are coarser than 4.4 m", "fmax clamped to 125 Hz", "inline_12_v090 lies partly below 237 m"],
            &["bins are coarser than 4.9 m", "fmax clamped to 125 Hz", "inline_12_v100 lies partly below 263 m"],
            &["bins are coarser than 5.4 m", "fmax clamped to 125 Hz"],
        ]);
        assert_eq!(
            merge(&members),
            [
                "velocity scan, every member (figures for scale 0.9): bins are coarser than 4.4 m",
                "fmax clamped to 125 Hz",
                "velocity scale 0.9, scale 1 (figures for scale 0.9): inline_12 lies partly below 237 m",
            ]
        );
        let one = scan(&[&["a"], &[], &["a"]]);
        assert_eq!(merge(&one), ["velocity scale 0.9, scale 1.1: a"]);
        let alone = scan(&[&["inline_12_v090 lies below 237 m"], &[], &[]]);
        assert_eq!(merge(&alone), ["velocity scale 0.9: inline_12_v090 lies below 237 m"]);
        // A job that is not a scan says its warnings as they are.
        assert_eq!(merge(&[(None, vec!["x 1.5".into(), "y".into()])]), ["x 1.5", "y"]);
    }
}
