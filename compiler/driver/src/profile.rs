//! Solver profiles of imported legacy models (`.fds`, issue 16): the one place that says
//! what "legacy" and "v2" mean. `legacy` reproduces the legacy FreeDyn solver
//! (theory 3.3, seed 003): Euler-parameter bodies, the Negrut HHT form, the legacy
//! Newton criterion and the legacy error weights, with the file's α, tolerance and step
//! limits. `v2` runs the same model on the Lie group with today's defaults (Arnold–
//! Bruls form, velocity Newton criterion, mixed weights) and the same step control.

use fdc_runtime::{ErrorWeights, Settings, StepControl};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    #[default]
    Legacy,
    V2,
}

impl Profile {
    pub fn parse(word: &str) -> Result<Profile, String> {
        match word {
            "legacy" => Ok(Profile::Legacy),
            "v2" => Ok(Profile::V2),
            other => Err(format!("unknown profile `{other}` (legacy, v2)")),
        }
    }

    /// The body type the importer writes.
    pub fn body_type(self) -> &'static str {
        match self {
            Profile::Legacy => "rigid_body_euler",
            Profile::V2 => "rigid_body",
        }
    }

    /// How the importer writes a `.fds` file as fd text (`dir`: the `.fds` file's
    /// directory; `table_prefix`: how the fd file reaches that directory).
    pub fn write_options(
        self,
        source_name: &str,
        dir: &std::path::Path,
        table_prefix: &std::path::Path,
    ) -> fdc_fds::WriteOptions {
        fdc_fds::WriteOptions {
            body_type: self.body_type().to_string(),
            // Form and Newton criterion have simulate keys: they go into the file.
            legacy_solver: self == Profile::Legacy,
            source_name: source_name.to_string(),
            table_prefix: table_prefix.to_path_buf(),
            dir: dir.to_path_buf(),
        }
    }

    /// What no `simulate` key carries, on top of the model's settings: the error
    /// weights and (from a `.fds` file, `extras`) the Newton iteration limit and the
    /// option without gyroscopic derivatives.
    pub fn apply(self, s: &mut Settings, extras: Option<&fdc_fds::SolverExtras>) {
        if self == Profile::Legacy {
            s.weights = ErrorWeights::Legacy;
            s.control = StepControl::Legacy;
            if let Some(x) = extras {
                s.max_newton_iterations = x.max_newton_iterations;
                s.iter_noqv = x.iter_noqv;
            }
        }
    }
}
