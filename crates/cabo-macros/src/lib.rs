//! # cabo-macros
//!
//! The procedural macros of cabo. Plugins use them through `cabo-core`'s re-exports
//! (`#[cabo_core::plugin(…)]`), never by naming this crate.
//!
//! A plugin's spec type must be known under one name twice: to typetag, which deserialises
//! `{ type: NAME, … }` into it, and to the catalogue (`cabo_core::registry`), which lists it
//! and suggests the closest name for a typo. Written as two registrations the two names can
//! drift apart; [`macro@plugin`] writes both from one `name`.
//!
//! This crate must not depend on any cabo crate: `cabo-core` depends on it. The code it
//! generates names only `::cabo_core` and, through `cabo-core`'s re-exports, `typetag` and
//! `inventory`, so a plugin crate needs neither of those as a dependency of its own.

#![forbid(unsafe_code)]

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Ident, ItemImpl, LitStr, Token};

/// The plugin spec traits of `cabo-core`, each with the catalogue `Kind` variant its
/// implementations register as. The kind follows from the trait, so it cannot be misstated.
const SPEC_TRAITS: &[(&str, &str)] = &[
    ("ProblemSpec", "Problem"),
    ("CostFunctionSpec", "CostFunction"),
    ("ModelSpec", "Model"),
    ("CostModelSpec", "CostModel"),
    ("AcquisitionSpec", "Acquisition"),
    ("PolicySpec", "Policy"),
    ("StudySpec", "Study"),
];

/// The attribute's keys, every one required.
const KEYS: [&str; 4] = ["name", "summary", "paper", "example"];

/// Registers a plugin's spec type under one name, both with typetag (so specs deserialise
/// `{ type: NAME, … }` into it) and in the catalogue (`cargo xtask list`, "did you mean"):
///
/// ```ignore
/// #[cabo_core::plugin(
///     name = "ei",
///     summary = "Expected improvement",
///     paper = "standard",
///     example = "{ type: ei }"
/// )]
/// impl AcquisitionSpec for EiSpec { /* … */ }
/// ```
///
/// It goes on the `impl` of one of cabo's spec traits — `ProblemSpec`, `CostFunctionSpec`,
/// `ModelSpec`, `CostModelSpec`, `AcquisitionSpec`, `PolicySpec`, `StudySpec` — and the
/// catalogue kind is the one of that trait. All four keys are string literals and required:
/// - `name`: the `type` in specs: lowercase letters, digits and `_`, starting with a letter;
/// - `summary`: one line saying what the plugin does;
/// - `paper`: where it comes from (a seed file and section, or "standard");
/// - `example`: a YAML snippet for the plugin's spec key, beginning `{ type: NAME`, which
///   `tests/catalogue.rs` parses and validates.
///
/// It expands to `#[typetag::serde(name = NAME)]` on the `impl` and an
/// `inventory::submit!` of the `PluginInfo`, both through `cabo_core`'s re-exports.
#[proc_macro_attribute]
pub fn plugin(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand(args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// The attribute's arguments, each with its span for messages.
struct Args {
    name: LitStr,
    summary: LitStr,
    paper: LitStr,
    example: LitStr,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut found: [Option<LitStr>; 4] = Default::default();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            let Some(i) = KEYS.iter().position(|k| key == k) else {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown key `{key}`: `#[cabo_core::plugin]` takes {}",
                        keys_list()
                    ),
                ));
            };
            input.parse::<Token![=]>()?;
            let value: LitStr = input.parse().map_err(|e| {
                syn::Error::new(e.span(), format!("`{key}` must be a string literal"))
            })?;
            if found[i].replace(value).is_some() {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{key}` is given twice"),
                ));
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        let missing: Vec<String> = KEYS
            .iter()
            .zip(&found)
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| format!("`{k}`"))
            .collect();
        let [Some(name), Some(summary), Some(paper), Some(example)] = found else {
            return Err(syn::Error::new(
                Span::call_site(),
                format!(
                    "`#[cabo_core::plugin]` lacks {}: it takes {}",
                    missing.join(", "),
                    keys_list()
                ),
            ));
        };
        Ok(Args {
            name,
            summary,
            paper,
            example,
        })
    }
}

/// `name = "…", summary = "…", paper = "…", example = "…"`, for messages.
fn keys_list() -> String {
    KEYS.map(|k| format!("{k} = \"…\"")).join(", ")
}

/// The names of the spec traits, for messages.
fn traits_list() -> String {
    SPEC_TRAITS
        .iter()
        .map(|(t, _)| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks the arguments' values; the name rule is the one `cargo xtask new-plugin` writes.
fn check_values(args: &Args) -> syn::Result<()> {
    let name = args.name.value();
    let well_formed = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !well_formed {
        return Err(syn::Error::new(
            args.name.span(),
            format!(
                "plugin name {name:?}: use lowercase letters, digits and `_`, starting with a \
                 letter (it is the `type` in specs)"
            ),
        ));
    }
    for (key, lit) in [("summary", &args.summary), ("paper", &args.paper)] {
        if lit.value().trim().is_empty() {
            return Err(syn::Error::new(
                lit.span(),
                format!("`{key}` is empty: the catalogue prints it"),
            ));
        }
    }
    // The example's own `type` is the third place the name is written; checking it here
    // keeps all three equal where they are written, not only when the catalogue test runs.
    let example = args.example.value();
    let head = format!("{{ type: {name}");
    let names_it = example
        .strip_prefix(&head)
        .is_some_and(|rest| rest.starts_with([',', ' ', '}']));
    if !names_it {
        return Err(syn::Error::new(
            args.example.span(),
            format!("the example must begin `{head}` (then `,` or ` }}`), got {example:?}"),
        ));
    }
    Ok(())
}

/// The spec trait `item` implements, as written there, with its name and the catalogue
/// `Kind` variant it registers as; or the error for an `impl` that is not of one of cabo's
/// spec traits, or that already carries a typetag attribute.
fn spec_trait(item: &ItemImpl) -> syn::Result<(syn::Path, &'static str, &'static str)> {
    let Some((trait_path, _)) = item
        .trait_
        .as_ref()
        .filter(|_| item.modifiers.polarity.is_none())
    else {
        return Err(syn::Error::new_spanned(
            &item.self_ty,
            format!(
                "`#[cabo_core::plugin]` goes on an `impl` of a plugin spec trait ({}), not on \
                 an inherent or negative `impl`",
                traits_list()
            ),
        ));
    };
    let trait_path = trait_path.clone();
    let last = trait_path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    let Some(&(trait_name, variant)) = SPEC_TRAITS.iter().find(|(t, _)| *t == last) else {
        return Err(syn::Error::new_spanned(
            &trait_path,
            format!(
                "`{last}` is not a plugin spec trait: `#[cabo_core::plugin]` registers \
                 implementations of {}",
                traits_list()
            ),
        ));
    };
    if let Some(attr) = item.attrs.iter().find(|a| {
        let segs: Vec<String> = a
            .path()
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        segs.first().is_some_and(|s| s == "typetag")
    }) {
        return Err(syn::Error::new_spanned(
            attr,
            "remove this attribute: `#[cabo_core::plugin]` registers the type with typetag itself",
        ));
    }
    Ok((trait_path, trait_name, variant))
}

/// The whole expansion, or the first error in the attribute or the item.
fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: Args = syn::parse2(args)?;
    check_values(&args)?;
    let mut item: ItemImpl = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!(
                "`#[cabo_core::plugin]` goes on an `impl` of a plugin spec trait ({}) for the \
                 plugin's spec type",
                traits_list()
            ),
        )
    })?;
    let (trait_path, trait_name, variant) = spec_trait(&item)?;
    let trait_ident = format_ident!("{trait_name}");
    let variant = format_ident!("{variant}");
    let Args {
        name,
        summary,
        paper,
        example,
    } = &args;
    item.attrs
        .push(syn::parse_quote!(#[typetag::serde(name = #name)]));
    // Spanned at the trait, so a namesake's type error points there.
    let same_trait = quote_spanned! {trait_path.span()=>
        const _: ::core::marker::PhantomData<dyn ::cabo_core::#trait_ident> =
            ::core::marker::PhantomData::<dyn #trait_path>;
    };
    Ok(quote! {
        const _: () = {
            // typetag's expansion names its own crate as `typetag::…`; this brings it into
            // scope from cabo-core, so plugin crates need no dependency on it.
            use ::cabo_core::typetag;

            #item

            // The kind below follows from the trait's name; this fails to compile when that
            // name is not cabo's trait but a namesake.
            #same_trait

            ::cabo_core::inventory::submit! {
                ::cabo_core::registry::PluginInfo {
                    kind: ::cabo_core::registry::Kind::#variant,
                    name: #name,
                    summary: #summary,
                    paper: #paper,
                    example_yaml: #example,
                    crate_name: ::core::env!("CARGO_PKG_NAME"),
                }
            }
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(args: TokenStream, item: TokenStream) -> String {
        match expand(args, item) {
            Ok(ts) => panic!("expected an error, got {ts}"),
            Err(e) => e.to_string(),
        }
    }

    fn ei_args() -> TokenStream {
        quote!(
            name = "ei",
            summary = "Expected improvement",
            paper = "standard",
            example = "{ type: ei }"
        )
    }

    #[test]
    fn the_kind_follows_from_the_trait() {
        for (t, kind) in SPEC_TRAITS {
            let tr = format_ident!("{t}");
            let out = expand(ei_args(), quote!(impl cabo_core::#tr for S {}))
                .unwrap()
                .to_string();
            assert!(out.contains(&format!("Kind :: {kind} ,")), "{out}");
            assert!(out.contains("typetag :: serde (name = \"ei\")"), "{out}");
            assert!(out.contains("name : \"ei\""), "{out}");
        }
    }

    #[test]
    fn a_trait_that_is_no_spec_trait_is_refused_naming_the_valid_ones() {
        let e = err(ei_args(), quote!(impl Acquisition for S {}));
        assert!(
            e.contains("`Acquisition` is not a plugin spec trait"),
            "{e}"
        );
        assert!(
            e.contains("`AcquisitionSpec`") && e.contains("`StudySpec`"),
            "{e}"
        );
        let e = err(ei_args(), quote!(impl S {}));
        assert!(e.contains("not on an inherent"), "{e}");
        let e = err(
            ei_args(),
            quote!(
                struct S;
            ),
        );
        assert!(e.contains("goes on an `impl`"), "{e}");
    }

    #[test]
    fn keys_are_checked() {
        let item = quote!(impl AcquisitionSpec for S {});
        let e = err(
            quote!(name = "ei", summary = "s", paper = "p"),
            item.clone(),
        );
        assert!(e.contains("lacks `example`"), "{e}");
        let e = err(
            quote!(
                name = "ei",
                name = "ei",
                summary = "s",
                paper = "p",
                example = "{ type: ei }"
            ),
            item.clone(),
        );
        assert!(e.contains("`name` is given twice"), "{e}");
        let e = err(quote!(kind = "acquisition"), item.clone());
        assert!(e.contains("unknown key `kind`"), "{e}");
        let e = err(
            quote!(
                name = ei,
                summary = "s",
                paper = "p",
                example = "{ type: ei }"
            ),
            item.clone(),
        );
        assert!(e.contains("`name` must be a string literal"), "{e}");
    }

    #[test]
    fn names_and_examples_are_checked() {
        let item = quote!(impl AcquisitionSpec for S {});
        let e = err(
            quote!(
                name = "Ei",
                summary = "s",
                paper = "p",
                example = "{ type: Ei }"
            ),
            item.clone(),
        );
        assert!(e.contains("lowercase letters"), "{e}");
        let e = err(
            quote!(
                name = "ei",
                summary = "s",
                paper = "p",
                example = "{ type: eix }"
            ),
            item.clone(),
        );
        assert!(e.contains("must begin `{ type: ei`"), "{e}");
        let e = err(
            quote!(
                name = "ei",
                summary = " ",
                paper = "p",
                example = "{ type: ei }"
            ),
            item.clone(),
        );
        assert!(e.contains("`summary` is empty"), "{e}");
        for ok in ["{ type: ei }", "{ type: ei, beta: 2.0 }"] {
            let args = quote!(name = "ei", summary = "s", paper = "p", example = #ok);
            assert!(expand(args, item.clone()).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_leftover_typetag_attribute_is_refused() {
        let e = err(
            ei_args(),
            quote!(
                #[typetag::serde(name = "ei")]
                impl AcquisitionSpec for S {}
            ),
        );
        assert!(e.contains("registers the type with typetag itself"), "{e}");
    }
}
