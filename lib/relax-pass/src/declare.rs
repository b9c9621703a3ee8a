//! [`declare_pass!`](crate::declare_pass): one declaration per pass, in the spirit of
//! MLIR's `Passes.td` and rustc's `declare_passes!`.
//!
//! The declaration names the pass's registry entry, its kind (`Module`, `RelaxFunction`
//! or `PrimFunc`, which is its anchor), its name, aliases and summary, how the pass is
//! built, and its options, each once: field, type, default, key and help. It generates
//!
//! * the `PassInfo` constant (the `OptionInfo` list included, each default rendered as
//!   written, for `--list-passes`);
//! * for passes with options, the options struct: one public-as-declared field per
//!   option, `Default` from the declared defaults, and [`TypedOptions`](crate::TypedOptions),
//!   which reads `PassOptions` into it with messages that name the pass, the key and the
//!   bad value, and suggests a close key for an unknown one.
//!
//! The syntax (`?` optional, `*` repeated):
//!
//! ```text
//! declare_pass! {
//!     #[doc]* VIS INFO: KIND "name" {
//!         (aliases: ["alias", ...],)?
//!         summary: "one line",
//!         run: FUNCTION,          // or
//!         new: CONSTRUCTOR,
//!     }
//!     // With `new:` only: the options struct the constructor receives.
//!     (#[doc]* VIS struct OPTIONS {
//!         (#[doc]* VIS field: TYPE = DEFAULT {
//!             key: "key", help: "help" (, default_key: true)? (, check: FN, "valid values")?
//!         },)*
//!     })?
//! }
//! ```
//!
//! `KIND` is `Module`, `RelaxFunction` or `PrimFunc`. `FUNCTION` has the signature of the
//! kind's trait method (`fn(&mut RelaxFunction, &mut FunctionContext<'_>) -> PassResult`
//! for `RelaxFunction`). `CONSTRUCTOR` is called with the options struct (`NoOptions`
//! when none is declared) and returns the pass.
//!
//! Three forms, by how the pass is built:
//!
//! ```
//! use relax_ir::{Module, PrimFunc};
//! use relax_pass::{FunctionContext, ModulePass, PassContext, PassResult, PrimFuncPass};
//!
//! // `run:` a function (or closure) with the trait's signature, for passes without
//! // options or state.
//! relax_pass::declare_pass! {
//!     /// Registry entry.
//!     pub STRIP: PrimFunc "strip-attrs" {
//!         summary: "remove the attributes of every PrimFunc",
//!         run: |f, _cx| {
//!             let changed = !f.attrs.is_empty();
//!             f.attrs = Default::default();
//!             Ok(changed)
//!         },
//!     }
//! }
//!
//! // `new:` a constructor taking no options (`NoOptions`), for passes with state.
//! struct Tag(&'static str);
//! impl ModulePass for Tag {
//!     fn run(&self, m: &mut Module, _cx: &mut PassContext) -> PassResult {
//!         m.attrs.set(self.0, relax_ir::AttrValue::Bool(true));
//!         Ok(true)
//!     }
//! }
//! relax_pass::declare_pass! {
//!     /// Registry entry.
//!     pub TAG: Module "tag" {
//!         aliases: ["mark"],
//!         summary: "tag the module",
//!         new: |_| Tag("tagged"),
//!     }
//! }
//!
//! // `new:` a constructor taking the options struct declared after it.
//! struct Schedule {
//!     options: ScheduleOptions,
//! }
//! impl PrimFuncPass for Schedule {
//!     fn run(&self, f: &mut PrimFunc, _cx: &mut FunctionContext<'_>) -> PassResult {
//!         Ok(self.options.vector_bits > 0 && !f.params.is_empty())
//!     }
//! }
//! fn is_vector_width(&b: &i64) -> bool {
//!     (8..=4096).contains(&b) && (b as u64).is_power_of_two()
//! }
//! relax_pass::declare_pass! {
//!     /// Registry entry.
//!     pub SCHEDULE: PrimFunc "schedule" {
//!         summary: "schedule kernels",
//!         new: |options| Schedule { options },
//!     }
//!     /// The options of `schedule`.
//!     pub struct ScheduleOptions {
//!         pub vector_bits: i64 = 256 {
//!             key: "vector-bits",
//!             help: "the width of the target's vector registers",
//!             check: is_vector_width, "a power of two from 8 to 4096",
//!         },
//!     }
//! }
//!
//! assert_eq!(SCHEDULE.options[0].default, "256");
//! assert_eq!(ScheduleOptions::default().vector_bits, 256);
//! let bad = relax_pass::PassOptions(vec![("vector-bits".into(), "100".into())]);
//! assert_eq!(
//!     SCHEDULE.create(&bad).unwrap_err(),
//!     "pass `schedule`: option `vector-bits` must be a power of two from 8 to 4096, found `100`"
//! );
//! assert_eq!(TAG.anchor(), relax_pass::Anchor::Module);
//! assert_eq!(STRIP.anchor(), relax_pass::Anchor::PrimFunc);
//! ```
//!
//! The kind must match the trait the built pass implements (`ModulePass`,
//! `RelaxFunctionPass`, `PrimFuncPass`), or the declaration does not compile. A default
//! is a literal of the field's type (shown as `concat!` renders it: `256`, `q4_0`).
//! `check` is an optional `fn(&T) -> bool` with the description of valid values used in
//! messages.
//! Field types implement [`OptionValue`](crate::OptionValue) (`bool`, the integer
//! types, and enumerated types of the passes, whose default may be written as the
//! string a user types, `= "q4_0"`, through [`FromLiteral`](crate::options::FromLiteral)).
//! `default_key: true` makes the option the pass's default key: a value given without a
//! key sets it (`--quantize-weights=q4_0`, [`options`](crate::options)).

/// Declares a pass: its registry entry and, when it has options, its options struct.
/// See the [module documentation](crate::declare) for the syntax.
#[macro_export]
macro_rules! declare_pass {
    (
        $(#[$meta:meta])*
        $vis:vis $info:ident : $kind:ident $name:literal {
            $(aliases: [$($alias:literal),* $(,)?],)?
            summary: $summary:literal,
            run: $run:expr $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis const $info: $crate::PassInfo = $crate::PassInfo {
            name: $name,
            aliases: &[$($($alias),*)?],
            summary: $summary,
            options: &[],
            factory: $crate::PassFactory::$kind(|o| {
                <$crate::NoOptions as $crate::TypedOptions>::from_options(o)?;
                Ok(Box::new($crate::__pass_fn!($kind, $run)))
            }),
        };
    };
    (
        $(#[$meta:meta])*
        $vis:vis $info:ident : $kind:ident $name:literal {
            $(aliases: [$($alias:literal),* $(,)?],)?
            summary: $summary:literal,
            new: $new:expr $(,)?
        }
    ) => {
        $crate::declare_pass! {
            $(#[$meta])*
            $vis $info: $kind $name {
                $(aliases: [$($alias),*],)?
                summary: $summary,
                @options $crate::NoOptions,
                new: $new,
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis $info:ident : $kind:ident $name:literal {
            $(aliases: [$($alias:literal),* $(,)?],)?
            summary: $summary:literal,
            @options $opts:ty,
            new: $new:expr,
        }
    ) => {
        $(#[$meta])*
        $vis const $info: $crate::PassInfo = $crate::PassInfo {
            name: $name,
            aliases: &[$($($alias),*)?],
            summary: $summary,
            options: <$opts as $crate::TypedOptions>::OPTIONS,
            factory: $crate::PassFactory::$kind(|o| {
                let options = <$opts as $crate::TypedOptions>::from_options(o)?;
                Ok(Box::new(($new)(options)))
            }),
        };
    };
    (
        $(#[$meta:meta])*
        $vis:vis $info:ident : $kind:ident $name:literal {
            $(aliases: [$($alias:literal),* $(,)?],)?
            summary: $summary:literal,
            new: $new:expr $(,)?
        }
        $(#[$smeta:meta])*
        $svis:vis struct $opts:ident {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $ty:ty = $default:literal {
                    key: $key:literal,
                    help: $help:literal
                    $(, default_key: $dk:literal)?
                    $(, check: $check:expr, $expects:literal)?
                    $(,)?
                }
            ),* $(,)?
        }
    ) => {
        $crate::declare_pass! {
            $(#[$meta])*
            $vis $info: $kind $name {
                $(aliases: [$($alias),*],)?
                summary: $summary,
                @options $opts,
                new: $new,
            }
        }

        $(#[$smeta])*
        #[derive(Clone, Debug, PartialEq)]
        $svis struct $opts {
            $(
                #[doc = concat!("`", $key, "` (default `", concat!($default), "`): ", $help, ".")]
                $(#[$fmeta])*
                $fvis $field: $ty,
            )*
        }

        impl Default for $opts {
            fn default() -> Self {
                $opts { $($field: <$ty as $crate::options::FromLiteral<_>>::from_literal($default),)* }
            }
        }

        impl $crate::TypedOptions for $opts {
            const OPTIONS: &'static [$crate::OptionInfo] = &[
                $($crate::OptionInfo {
                    name: $key,
                    help: $help,
                    default: concat!($default),
                    default_key: $crate::__or_false!($($dk)?),
                },)*
            ];
            fn from_options(o: &$crate::PassOptions) -> Result<Self, $crate::OptionError> {
                let o = &$crate::options::resolve_default_key(o, Self::OPTIONS)?;
                $crate::options::check_keys(o, Self::OPTIONS)?;
                Ok($opts {
                    $($field: $crate::options::option_value::<$ty>(
                        o,
                        $key,
                        <$ty as $crate::options::FromLiteral<_>>::from_literal($default),
                        $crate::__option_check!($ty $(, $check, $expects)?),
                    )?,)*
                })
            }
        }
    };
}

/// The pass made of a function, by kind (used by `declare_pass!`).
#[doc(hidden)]
#[macro_export]
macro_rules! __pass_fn {
    (Module, $run:expr) => {
        $crate::ModuleFn($run)
    };
    (RelaxFunction, $run:expr) => {
        $crate::RelaxFunctionFn($run)
    };
    (PrimFunc, $run:expr) => {
        $crate::PrimFuncFn($run)
    };
}

/// `true` when given, else `false` (used by `declare_pass!` for `default_key`).
#[doc(hidden)]
#[macro_export]
macro_rules! __or_false {
    () => {
        false
    };
    ($v:literal) => {
        $v
    };
}

/// The optional value check of an option (used by `declare_pass!`).
#[doc(hidden)]
#[macro_export]
macro_rules! __option_check {
    ($ty:ty) => {
        None
    };
    ($ty:ty, $check:expr, $expects:literal) => {
        Some::<$crate::options::OptionCheck<$ty>>(($check, $expects))
    };
}

#[cfg(test)]
mod tests {
    use relax_ir::Module;

    use crate::{Anchor, FunctionContext, ModulePass, PassContext, PassKind, PassOptions, PassResult, TypedOptions};

    fn touch(f: &mut relax_ir::RelaxFunction, _cx: &mut FunctionContext<'_>) -> PassResult {
        f.func.attrs.set("touched", relax_ir::AttrValue::Bool(true));
        Ok(true)
    }

    crate::declare_pass! {
        /// A function pass made of a function.
        pub TOUCH: RelaxFunction "touch" {
            aliases: ["poke"],
            summary: "touches",
            run: touch,
        }
    }

    struct Counter {
        options: CounterOptions,
    }

    impl ModulePass for Counter {
        fn run(&self, m: &mut Module, _cx: &mut PassContext) -> PassResult {
            m.attrs.set("step", relax_ir::AttrValue::Int(self.options.step));
            Ok(!self.options.dry_run && self.options.limit > 0)
        }
    }

    fn is_even(v: &i64) -> bool {
        v % 2 == 0
    }

    crate::declare_pass! {
        /// A module pass with options.
        pub COUNTER: Module "counter" {
            summary: "counts",
            new: |options| Counter { options },
        }
        /// The options of `counter`.
        pub struct CounterOptions {
            pub step: i64 = 2 {
                key: "step",
                help: "how far to count",
                check: is_even, "an even integer",
            },
            pub dry_run: bool = false { key: "dry-run", help: "change nothing" },
            pub limit: usize = 10 { key: "limit", help: "the most steps" },
        }
    }

    fn opts(kv: &[(&str, &str)]) -> PassOptions {
        PassOptions(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn info_is_generated() {
        assert_eq!(TOUCH.name, "touch");
        assert_eq!(TOUCH.aliases, ["poke"]);
        assert_eq!(TOUCH.anchor(), Anchor::RelaxFunction);
        assert!(TOUCH.options.is_empty());
        assert_eq!(COUNTER.anchor(), Anchor::Module);
        let rows: Vec<_> = COUNTER.options.iter().map(|o| (o.name, o.default, o.help)).collect();
        assert_eq!(
            rows,
            [
                ("step", "2", "how far to count"),
                ("dry-run", "false", "change nothing"),
                ("limit", "10", "the most steps")
            ]
        );
    }

    #[test]
    fn options_are_typed_with_defaults() {
        assert_eq!(CounterOptions::default(), CounterOptions { step: 2, dry_run: false, limit: 10 });
        let o = CounterOptions::from_options(&opts(&[("limit", "3"), ("dry-run", "true")])).unwrap();
        assert_eq!(o, CounterOptions { step: 2, dry_run: true, limit: 3 });
        // The rendered defaults read back as the defaults.
        let defaults = PassOptions(COUNTER.options.iter().map(|o| (o.name.into(), o.default.into())).collect());
        assert_eq!(CounterOptions::from_options(&defaults).unwrap(), CounterOptions::default());
    }

    #[test]
    fn bad_options_name_the_pass_key_and_value() {
        let err = |kv: &[(&str, &str)]| COUNTER.create(&opts(kv)).unwrap_err();
        assert_eq!(err(&[("limit", "x")]), "pass `counter`: option `limit` must be a non-negative integer, found `x`");
        assert_eq!(err(&[("step", "3")]), "pass `counter`: option `step` must be an even integer, found `3`");
        assert_eq!(err(&[("step", "two")]), "pass `counter`: option `step` must be an even integer, found `two`");
        assert_eq!(
            err(&[("dry-run", "yes")]),
            "pass `counter`: option `dry-run` must be `true` or `false`, found `yes`"
        );
        assert_eq!(err(&[("dryrun", "1")]), "pass `counter` has no option `dryrun`; did you mean `dry-run`?");
        assert_eq!(err(&[("step", "2"), ("step", "4")]), "pass `counter`: option `step` is given more than once");
        assert_eq!(
            TOUCH.create(&opts(&[("x", "1")])).unwrap_err(),
            "pass `touch` has no option `x`: it takes no options"
        );
    }

    #[test]
    fn built_passes_run() {
        let mut m = Module::new();
        let Ok(PassKind::Module(p)) = COUNTER.create(&opts(&[("step", "4")])) else { panic!("a module pass") };
        assert_eq!(p.run(&mut m, &mut PassContext::default()), Ok(true));
        assert_eq!(m.attrs.get("step").and_then(|v| v.as_int()), Some(4));
        assert!(matches!(TOUCH.create(&PassOptions::default()), Ok(PassKind::RelaxFunction(_))));
    }
}
