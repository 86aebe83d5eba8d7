//! Model totals: energies and momenta summed from the channels that element types
//! declare under agreed output names, so that every law stays in the library (the
//! bodies of `stdlib/bodies.fd` write `T`, `V`, `p`, `L`; the springs of
//! `stdlib/forces.fd` write their potential energy `V`). docs/results.md lists them.

/// Each total and the type output names it sums (over every instance that has them).
pub const TOTALS: &[(&str, &[&str])] = &[
    ("energy.kinetic", &["T"]),
    ("energy.potential", &["V"]),
    ("energy.total", &["T", "V"]),
    ("momentum.linear.x", &["p.x"]),
    ("momentum.linear.y", &["p.y"]),
    ("momentum.linear.z", &["p.z"]),
    ("momentum.angular.x", &["L.x"]),
    ("momentum.angular.y", &["L.y"]),
    ("momentum.angular.z", &["L.z"]),
];

/// Which channels each total adds up: `outputs` are the output names of each channel
/// in channel order (`None` for a multiplier). Empty when no channel is a kinetic
/// energy `T` (a model without library bodies gets no totals).
pub fn plan(outputs: &[Option<&str>]) -> Vec<(String, Vec<usize>)> {
    if !outputs.contains(&Some("T")) {
        return Vec::new();
    }
    TOTALS
        .iter()
        .map(|(name, parts)| {
            let idx = (outputs.iter().enumerate())
                .filter(|(_, o)| o.is_some_and(|o| parts.contains(&o)))
                .map(|(i, _)| i)
                .collect();
            (name.to_string(), idx)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::plan;

    #[test]
    fn totals_add_the_named_channels_only() {
        let outs = [
            Some("T"),
            Some("V"),
            None,
            Some("p.x"),
            Some("V"),
            Some("Tx"),
        ];
        let p = plan(&outs);
        let get = |n: &str| p.iter().find(|t| t.0 == n).unwrap().1.clone();
        assert_eq!(get("energy.kinetic"), vec![0]);
        assert_eq!(get("energy.potential"), vec![1, 4]);
        assert_eq!(get("energy.total"), vec![0, 1, 4]);
        assert_eq!(get("momentum.linear.x"), vec![3]);
        assert!(plan(&[Some("V"), None]).is_empty());
    }
}
