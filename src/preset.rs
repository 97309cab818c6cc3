//! `preset = "paper"`: every setting of a method as its paper states it (docs/algorithms.md,
//! "The papers' settings"), so that one switch runs the published algorithm. The preset fills
//! in the parameters the caller did not give through `Params::set`; those given win.

use super::{Method, Params};

/// The settings every paper shares: a plain least-squares tree (leaves of one row allowed, no
/// L2 penalty, no bound on a leaf), every row and feature in every tree, the recursions
/// unguarded and the last iterate as the output. The papers' trees are exact regression trees;
/// none of them regularises a leaf or keeps an earlier iterate. A leaf line search of a smooth
/// loss is one Newton step from 0: Friedman's TreeBoost leaf and Proximal boosting's (its App. C
/// takes "one or several steps of the Newton-Raphson method", its code one); the
/// piecewise-linear losses' leaves are exact whatever the setting.
const COMMON: &[(&str, &str)] = &[
    ("min_samples_leaf", "1"),
    ("l2_leaf", "0"),
    ("min_split_gain", "0"),
    ("leaf_newton_steps", "1"),
    ("max_leaf_value", "0"),
    ("subsample", "1"),
    ("colsample_bytree", "1"),
    ("colsample_bynode", "1"),
    ("sample_strategy", "uniform"),
    ("quantized_gradients", "false"),
    ("safeguard", "none"),
    ("keep", "last"),
];

/// What the paper of `method` sets beyond `COMMON`: its step rule, step multiplier, schedule,
/// initial model and (AGBM) the printed sign of the corrected residual. `n_iter` gives
/// `repeated_gbm` the paper's k_t = t inner fits at every iteration.
fn method_settings(method: Method, n_iter: usize) -> Vec<(&'static str, String)> {
    let s = |pairs: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        pairs.iter().map(|&(n, v)| (n, v.to_string())).collect()
    };
    match method {
        // Friedman's TreeBoost, Alg. 1 of Proximal boosting: each leaf re-solved at the output.
        Method::Gbm => s(&[("step", "leaf_line_search"), ("init", "optimal")]),
        // RGBM, Alg. 2: constant step ρ = 1/σ (the default ρ), from f = 0.
        Method::Rgbm => s(&[("step", "constant"), ("init", "zero")]),
        // AGBM, Alg. 2–4: fixed step η = ν/σ, from f = h = 0, the corrected residual as printed.
        Method::Agbm | Method::Agbmr | Method::Vagbm => s(&[
            ("step", "constant"),
            ("init", "zero"),
            ("corrected_residual", "paper"),
        ]),
        // Proximal boosting, Alg. 2–5 and 8: multiple line search, from the loss's constant
        // minimiser (its App. B); accelerated_gbm is Alg. 8 with the gradient.
        Method::Proximal
        | Method::ResidualProximal
        | Method::AcceleratedProximal
        | Method::AcceleratedGbm => s(&[("step", "leaf_line_search"), ("init", "optimal")]),
        // Generalized boosting, Alg. 2 and 3: f ← f − η_t h with η_t = ν/√t (Theorems 5 and
        // 7, the non-smooth case the paper is about), the projection used as fitted (ρ = 1).
        Method::ResidualGbm => s(&[
            ("step", "constant"),
            ("rho", "1"),
            ("schedule", "inv_sqrt"),
            ("init", "optimal"),
        ]),
        Method::RepeatedGbm => {
            let mut settings = s(&[
                ("step", "constant"),
                ("rho", "1"),
                ("schedule", "inv_sqrt"),
                ("init", "optimal"),
            ]);
            settings.push(("max_inner", n_iter.to_string()));
            settings
        }
        #[cfg(test)]
        Method::Toy => Vec::new(),
    }
}

/// Every setting the paper preset gives `method` (run `n_iter` iterations), in `set`'s
/// vocabulary.
pub(crate) fn paper_settings(method: Method, n_iter: usize) -> Vec<(&'static str, String)> {
    let mut settings: Vec<(&'static str, String)> =
        COMMON.iter().map(|&(n, v)| (n, v.to_string())).collect();
    settings.extend(method_settings(method, n_iter));
    settings
}

/// What the preset in force sets: its settings for the method, less the names given through
/// `Params::set` (which win).
pub(crate) fn applies(params: &Params) -> Vec<(&'static str, String)> {
    match params.preset {
        crate::params::Preset::None => Vec::new(),
        crate::params::Preset::Paper => paper_settings(params.method, params.n_iter),
    }
    .into_iter()
    .filter(|(name, _)| !params.explicit.contains(*name))
    .collect()
}

#[cfg(test)]
mod tests {
    use crate::params::{
        CorrectedResidual, Init, Keep, Method, Params, Preset, Safeguard, StepRule,
    };

    fn with(pairs: &[(&str, &str)]) -> Params {
        let mut params = Params::default();
        for (name, value) in pairs {
            params.set(name, value).unwrap();
        }
        params
    }

    #[test]
    fn the_preset_sets_the_papers_settings_and_explicit_parameters_win_in_any_order() {
        let paper = with(&[("method", "agbm"), ("preset", "paper")])
            .checked()
            .unwrap();
        assert_eq!(paper.preset, Preset::Paper);
        assert_eq!(paper.safeguard, Safeguard::None);
        assert_eq!(paper.keep, Keep::Last);
        assert_eq!(paper.init, Init::Zero);
        assert_eq!(paper.step, Some(StepRule::Constant));
        assert_eq!(paper.tree.l2_leaf, 0.0);
        assert_eq!(paper.tree.min_samples_leaf, Some(1));
        for order in [
            [
                ("preset", "paper"),
                ("corrected_residual", "reference_code"),
            ],
            [
                ("corrected_residual", "reference_code"),
                ("preset", "paper"),
            ],
        ] {
            let mut pairs = vec![("method", "agbm")];
            pairs.extend(order);
            pairs.push(("l2_leaf", "1"));
            let given = with(&pairs);
            let resolved = given.checked().unwrap();
            assert_eq!(
                resolved.corrected_residual,
                CorrectedResidual::ReferenceCode
            );
            assert_eq!(resolved.tree.l2_leaf, 1.0);
            assert_eq!(resolved.safeguard, Safeguard::None);
            let set: Vec<&str> = given.preset_settings().iter().map(|(n, _)| *n).collect();
            assert!(!set.contains(&"corrected_residual") && !set.contains(&"l2_leaf"));
            assert!(set.contains(&"safeguard") && set.contains(&"init"));
        }
    }

    #[test]
    fn the_preset_follows_the_method_set_after_it() {
        let params = with(&[
            ("preset", "paper"),
            ("method", "repeated_gbm"),
            ("n_iter", "7"),
        ]);
        let resolved = params.checked().unwrap();
        assert_eq!(resolved.max_inner, 7);
        assert_eq!(resolved.rho, Some(1.0));
        assert_eq!(resolved.step, Some(StepRule::Constant));
        // Every method's settings are valid for it, with every loss kind.
        for &method in Method::ALL {
            for loss in ["squared", "logistic", "absolute", "hinge", "softmax"] {
                let params = with(&[
                    ("method", method.name()),
                    ("loss", loss),
                    ("preset", "paper"),
                ]);
                if params
                    .clone()
                    .set("preset", "none")
                    .unwrap()
                    .validate()
                    .is_ok()
                {
                    params.checked().unwrap();
                }
            }
        }
    }

    #[test]
    fn without_a_preset_nothing_changes() {
        let params = with(&[("method", "agbm"), ("loss", "logistic")]);
        assert_eq!(params.resolved().unwrap(), params);
        assert!(params.preset_settings().is_empty());
        assert_eq!(Params::default().resolved().unwrap(), Params::default());
    }
}
