//! Every plugin this crate registers has a catalogue entry whose YAML example deserialises
//! to the spec of the same name and builds.

use cabo_core::registry::catalogue;
use cabo_core::{AcquisitionSpec, BuildContext, Kind, PolicySpec, ProblemInfo};

const OURS: [(Kind, &str); 7] = [
    (Kind::Acquisition, "ei"),
    (Kind::Acquisition, "log_ei"),
    (Kind::Acquisition, "ei_per_cost"),
    (Kind::Acquisition, "ei_puc_cc"),
    (Kind::Acquisition, "ucb"),
    (Kind::Acquisition, "thompson"),
    (Kind::Policy, "random_search"),
];

#[test]
fn examples_parse_and_build() {
    cabo_baselines::plugins();
    let problem = ProblemInfo::continuous("p", 2);
    let ctx = BuildContext {
        problem: &problem,
        seed: 0,
    };
    for (kind, name) in OURS {
        let info = catalogue()
            .into_iter()
            .find(|p| p.kind == kind && p.name == name)
            .unwrap_or_else(|| panic!("{name} is not registered"));
        assert!(!info.summary.is_empty() && !info.paper.is_empty());
        match kind {
            Kind::Acquisition => {
                let spec: Box<dyn AcquisitionSpec> = serde_saphyr::from_str(info.example_yaml)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                spec.validate(2).unwrap();
                spec.build(&ctx).unwrap();
                // The example names this very plugin.
                let json = serde_json::to_value(&spec).unwrap();
                assert_eq!(json["type"], name);
            }
            _ => {
                let spec: Box<dyn PolicySpec> = serde_saphyr::from_str(info.example_yaml)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                spec.build(&ctx).unwrap();
                assert_eq!(serde_json::to_value(&spec).unwrap()["type"], name);
            }
        }
    }
}
