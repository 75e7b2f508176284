//! The reproduction gallery stays true to `specs/`: every page under `docs/reproductions/`
//! records the fingerprints of the specs it was made from, and a page whose specs changed
//! since must be rewritten (`cargo xtask reproduce`) or marked stale
//! (`cargo xtask reproduce all --mark-stale`).

use std::path::Path;

#[test]
fn no_page_of_the_gallery_is_silently_stale() {
    cabo::init().expect("plugins registered");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = root.join("docs/reproductions");
    let stale = cabo_gallery::stale_pages(root, &pages).expect("the pages are readable");
    let unmarked: Vec<String> = stale
        .iter()
        .filter(|s| !s.marked)
        .map(|s| {
            let specs: Vec<String> = s
                .changed
                .iter()
                .map(|(p, was, now)| format!("{p} (page: {was}, now: {now})"))
                .collect();
            format!("{}: {}", s.page.display(), specs.join("; "))
        })
        .collect();
    assert!(
        unmarked.is_empty(),
        "pages made from specs that have changed since (rerun `cargo xtask reproduce <paper>` \
         or mark them with `cargo xtask reproduce all --mark-stale`):\n{}",
        unmarked.join("\n")
    );
}

#[test]
fn every_page_records_the_fingerprint_of_each_spec_it_draws_on() {
    cabo::init().expect("plugins registered");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let gallery = cabo_gallery::load(root, &root.join("docs/reproductions/gallery.yaml"))
        .unwrap_or_else(|e| panic!("the gallery files load:\n{e}"));
    for paper in &gallery.papers {
        let page = std::fs::read_to_string(root.join("docs/reproductions").join(&paper.page))
            .unwrap_or_else(|e| panic!("{}: {e}", paper.page));
        for spec in &paper.specs {
            assert!(
                page.contains(&format!("<!-- gallery-spec {} ", spec.path)),
                "{} does not record {}",
                paper.page,
                spec.path
            );
        }
        for claim in paper.claims.iter().chain(&paper.beyond_the_paper) {
            if let Some(spec) = &claim.spec {
                assert!(
                    paper.specs.iter().any(|s| &s.path == spec),
                    "{}: claim {} names a spec the paper does not list",
                    paper.page,
                    claim.id
                );
            }
        }
    }
}

#[test]
fn a_changed_spec_makes_its_page_stale_until_marked() {
    cabo::init().expect("plugins registered");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let spec_text = std::fs::read_to_string(root.join("specs/quickstart.yaml")).unwrap();
    std::fs::create_dir_all(tmp.path().join("specs")).unwrap();
    let spec = tmp.path().join("specs/q.yaml");
    std::fs::write(&spec, &spec_text).unwrap();
    let print = cabo_gallery::spec_fingerprint(&spec).unwrap();
    let pages = tmp.path().join("pages");
    std::fs::create_dir_all(&pages).unwrap();
    let page = pages.join("p.md");
    std::fs::write(
        &page,
        format!("# p\n\ntext\n<!-- gallery-spec specs/q.yaml {print} -->\n"),
    )
    .unwrap();
    let stale = |root: &Path| cabo_gallery::stale_pages(root, &pages).unwrap();
    assert!(stale(tmp.path()).is_empty());
    std::fs::write(
        &spec,
        spec_text.replace("budget: { cost: 150 }", "budget: { cost: 151 }"),
    )
    .unwrap();
    let found = stale(tmp.path());
    assert_eq!(found.len(), 1);
    assert!(!found[0].marked);
    let marked = cabo_gallery::mark_stale(tmp.path(), &pages).unwrap();
    assert_eq!(marked, vec![page.clone()]);
    assert!(stale(tmp.path())[0].marked);
    let text = std::fs::read_to_string(&page).unwrap();
    assert!(text.starts_with("# p\n\n<!-- gallery-stale "), "{text}");
    assert!(text.contains("specs/q.yaml"), "{text}");
}

/// Writing the pages again from a results directory with none of their runs (a machine that
/// never ran them) keeps every published claim row, figure and time as committed.
#[test]
fn rewriting_a_page_without_its_results_keeps_what_it_publishes() {
    cabo::init().expect("plugins registered");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed_dir = root.join("docs/reproductions");
    let gallery = cabo_gallery::load(root, &committed_dir.join("gallery.yaml"))
        .unwrap_or_else(|e| panic!("the gallery files load:\n{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let (pages, out) = (tmp.path().join("pages"), tmp.path().join("results"));
    std::fs::create_dir_all(&pages).unwrap();
    for paper in &gallery.papers {
        std::fs::copy(committed_dir.join(&paper.page), pages.join(&paper.page)).unwrap();
        // The per-run values beside the page: the rewrite pools them with the (absent)
        // results, so they alone carry the claims.
        let stem = paper.page.trim_end_matches(".md");
        let (from, to) = (committed_dir.join(stem), pages.join(stem));
        for entry in std::fs::read_dir(&from).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if name.to_string_lossy().ends_with(".runs.csv") {
                std::fs::create_dir_all(&to).unwrap();
                std::fs::copy(entry.path(), to.join(name)).unwrap();
            }
        }
    }
    let written = cabo_gallery::write_pages(root, &gallery.papers, &out, &pages, "test")
        .expect("pages written");
    // A page made from specs that changed since keeps nothing of theirs by design (its old
    // numbers belong to other specs); the staleness test above reports it.
    let stale = cabo_gallery::stale_pages(root, &committed_dir).expect("readable");
    for (paper, page) in gallery.papers.iter().zip(&written) {
        if stale
            .iter()
            .any(|s| s.page.file_name() == page.path.file_name())
        {
            continue;
        }
        let before = std::fs::read_to_string(committed_dir.join(&paper.page)).unwrap();
        let after = std::fs::read_to_string(&page.path).unwrap();
        if !page.changed {
            // No result to add: the page stays byte for byte.
            assert_eq!(after, before, "{}: changed", paper.page);
            continue;
        }
        let published = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| {
                    (l.starts_with("| ") && !l.contains("not run yet") && !l.contains("| — |"))
                        || l.starts_with("![")
                })
                .map(str::to_string)
                .collect()
        };
        let lost: Vec<String> = published(&before)
            .into_iter()
            .filter(|l| !after.contains(l.as_str()))
            .collect();
        assert!(lost.is_empty(), "{} lost:\n{}", paper.page, lost.join("\n"));
        assert!(
            !page.kept.is_empty() || !before.contains("!["),
            "{}: nothing kept",
            paper.page
        );
    }
}
