//! The redirect log (`kiln.redirects`) merged as a union: ours' lines, then the lines
//! theirs added, in theirs' order. A line one side removed stays removed.

/// The merged log.
pub fn merge_redirects(base: &str, ours: &str, theirs: &str) -> String {
    let base_lines: std::collections::HashSet<&str> = base.lines().collect();
    let ours_lines: std::collections::HashSet<&str> = ours.lines().collect();
    let mut out = String::with_capacity(ours.len() + theirs.len());
    for line in ours.lines() {
        out.push_str(line);
        out.push('\n');
    }
    for line in theirs.lines() {
        if !ours_lines.contains(line) && !base_lines.contains(line) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_moves_are_kept_in_order() {
        let base = "# kiln.redirects\na -> b\n";
        let ours = "# kiln.redirects\na -> b\nc -> d\n";
        let theirs = "# kiln.redirects\na -> b\ne -> f\nc -> d\n";
        assert_eq!(
            merge_redirects(base, ours, theirs),
            "# kiln.redirects\na -> b\nc -> d\ne -> f\n"
        );
        // A line ours removed is not brought back by theirs.
        assert_eq!(
            merge_redirects(base, "# kiln.redirects\n", base),
            "# kiln.redirects\n"
        );
    }
}
