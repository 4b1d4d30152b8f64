//! The modules of a crate and the paths by which they name each other, read with syn: the graph in which
//! `no_import_circles_between_modules` looks for circles.
//!
//! A module uses another when a path in it (a `use`, or a path in its code) leads to an item of the other,
//! through the crate's re-exports. A re-export alone (`pub use`) is no use by the module that makes it
//! unless its own code uses the name, and declaring a module (`mod x;`) is none either; test modules
//! (`#[cfg(test)]`) are left out. Circles are looked
//! for among the modules of one parent at every level of the tree: a module and the modules it declares
//! are one unit to the rest of the crate (the parent is their face: it re-exports what they define and
//! defines the words they share), so a use between a module and its ancestor does not count.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

type ModPath = Vec<String>;

/// A `use` leaf: the name it brings in, the path it stands for as written, and whether it is re-exported.
struct Import {
    name: String,
    path: ModPath,
    public: bool,
}

#[derive(Default)]
struct Module {
    file: PathBuf,
    children: BTreeSet<String>,
    imports: Vec<Import>,
    /// Globs (`use x::*`) as written, and whether each is re-exported.
    globs: Vec<(ModPath, bool)>,
    /// The paths written in the module's code (not in its `use` items).
    paths: Vec<ModPath>,
}

/// Every module of the crate whose root file is `root`.
struct Crate {
    modules: BTreeMap<ModPath, Module>,
}

/// A module still to read: its path, its file, the folder of its children, and its items when inline.
type Pending = (ModPath, PathBuf, PathBuf, Option<Vec<syn::Item>>);

/// Gathers what one module says; a module inside it (inline or in its own file) is queued instead.
struct Reader<'q> {
    module: Module,
    path: ModPath,
    dir: PathBuf,
    queue: &'q mut Vec<Pending>,
}

fn use_leaves(tree: &syn::UseTree, prefix: &mut ModPath, out: &mut Vec<(ModPath, Option<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut full = prefix.clone();
            full.push(n.ident.to_string());
            out.push((full, Some(n.ident.to_string())));
        }
        syn::UseTree::Rename(r) => {
            let mut full = prefix.clone();
            full.push(r.ident.to_string());
            out.push((full, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_leaves(t, prefix, out)),
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // Tests may use what they test from anywhere.
        if item.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && matches!(&a.meta, syn::Meta::List(l) if l.tokens.to_string() == "test")
        }) {
            return;
        }
        let name = item.ident.to_string();
        self.module.children.insert(name.clone());
        let mut path = self.path.clone();
        path.push(name.clone());
        let dir = self.dir.join(&name);
        match &item.content {
            Some((_, items)) => {
                self.queue.push((path, self.module.file.clone(), dir, Some(items.clone())));
            }
            None => {
                let file = [dir.with_extension("rs"), dir.join("mod.rs")].into_iter().find(|f| f.is_file());
                let file = file.unwrap_or_else(|| panic!("no file for module {path:?}"));
                self.queue.push((path, file, dir, None));
            }
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let public = !matches!(item.vis, syn::Visibility::Inherited);
        let mut leaves = Vec::new();
        use_leaves(&item.tree, &mut Vec::new(), &mut leaves);
        for (path, name) in leaves {
            match name {
                Some(name) if name != "self" => self.module.imports.push(Import { name, path, public }),
                // `use x::{self}` brings in `x`.
                Some(_) => {
                    let name = path[path.len() - 2].clone();
                    let path = path[..path.len() - 1].to_vec();
                    self.module.imports.push(Import { name, path, public })
                }
                None => self.module.globs.push((path, public)),
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.module.paths.push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }
}

impl Crate {
    /// Reads the modules of the crate whose root file is `root`.
    fn read(root: &Path) -> Crate {
        let dir = root.parent().unwrap().to_path_buf();
        let mut queue: Vec<Pending> = vec![(ModPath::new(), root.to_path_buf(), dir, None)];
        let mut modules = BTreeMap::new();
        while let Some((path, file, dir, inline)) = queue.pop() {
            let items = inline.unwrap_or_else(|| {
                let text = std::fs::read_to_string(&file).unwrap();
                syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display())).items
            });
            let module = Module { file: file.clone(), ..Module::default() };
            let mut reader = Reader { module, path: path.clone(), dir, queue: &mut queue };
            items.iter().for_each(|item| reader.visit_item(item));
            modules.insert(path, reader.module);
        }
        Crate { modules }
    }

    /// `written`, as named in module `at`, from the crate root; `None` for a path out of the crate (or to a
    /// local item).
    fn absolute(&self, at: &ModPath, written: &[String], depth: usize) -> Option<ModPath> {
        let (first, rest) = written.split_first()?;
        let module = &self.modules[at];
        let mut base = match first.as_str() {
            "crate" => ModPath::new(),
            "self" => at.clone(),
            "super" => {
                let mut base = at[..at.len().checked_sub(1)?].to_vec();
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                return Some(base.into_iter().chain(rest.iter().cloned()).collect());
            }
            _ if module.children.contains(first) => return Some(at.iter().chain(written).cloned().collect()),
            _ if depth < 8 => {
                let import = module.imports.iter().find(|i| &i.name == first)?;
                let mut base = self.absolute(at, &import.path, depth + 1)?;
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            _ => return None,
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module that holds the item `path` (from the crate root) leads to, through re-exports.
    fn holder(&self, path: &[String], depth: usize) -> ModPath {
        let mut at = ModPath::new();
        for (i, segment) in path.iter().enumerate() {
            let module = &self.modules[&at];
            if module.children.contains(segment) {
                at.push(segment.clone());
                continue;
            }
            let reexport = module.imports.iter().find(|import| &import.name == segment);
            if let Some(target) = reexport.filter(|_| depth < 8).and_then(|i| self.absolute(&at, &i.path, depth + 1)) {
                let onward: ModPath = target.into_iter().chain(path[i + 1..].iter().cloned()).collect();
                return self.holder(&onward, depth + 1);
            }
            break;
        }
        at
    }

    /// Which modules each module of the crate uses, between siblings: a use between modules of different
    /// parents counts between their ancestors that are siblings (`a::x` using `b::y` is `a` using `b`), and
    /// one between a module and its own ancestor not at all.
    fn sibling_graph(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (at, module) in &self.modules {
            let used: BTreeSet<&String> = module.paths.iter().filter_map(|p| p.first()).collect();
            let mut written: Vec<&ModPath> = module.paths.iter().collect();
            written.extend(module.imports.iter().filter(|i| !i.public || used.contains(&i.name)).map(|i| &i.path));
            written.extend(module.globs.iter().filter(|(_, public)| !public).map(|(p, _)| p));
            for path in written {
                let Some(absolute) = self.absolute(at, path, 0) else { continue };
                let target = self.holder(&absolute, 0);
                let common = at.iter().zip(&target).take_while(|(a, b)| a == b).count();
                if common < at.len() && common < target.len() {
                    graph.entry(at[..=common].to_vec()).or_default().insert(target[..=common].to_vec());
                }
            }
        }
        graph
    }
}

/// A group of modules of one parent that use each other round a circle.
pub struct Circle {
    /// The modules, from the crate root (`run::folder, run::manifest`).
    pub modules: String,
    /// One circle through them, by their files.
    pub files: String,
}

/// The import circles among the modules of the crate whose root file is `root`: for each group of modules
/// that reach each other, one circle through them, its files named relative to `base`.
pub fn circles(root: &Path, base: &Path) -> Vec<Circle> {
    let krate = Crate::read(root);
    let graph = krate.sibling_graph();
    // Breadth first from `from`: each module reached, with the module it was reached from.
    let reaches = |from: &ModPath| -> BTreeMap<ModPath, ModPath> {
        let mut found = BTreeMap::new();
        let mut queue = VecDeque::from([from.clone()]);
        while let Some(module) = queue.pop_front() {
            for next in graph.get(&module).into_iter().flatten() {
                if !found.contains_key(next) {
                    found.insert(next.clone(), module.clone());
                    queue.push_back(next.clone());
                }
            }
        }
        found
    };
    let file = |m: &ModPath| {
        let file = &krate.modules[m].file;
        file.strip_prefix(base).unwrap_or(file).display().to_string()
    };
    let mut reported: BTreeSet<ModPath> = BTreeSet::new();
    let mut out = Vec::new();
    for module in graph.keys() {
        let found = reaches(module);
        if reported.contains(module) || !found.contains_key(module) {
            continue;
        }
        let group: BTreeSet<ModPath> =
            found.keys().filter(|other| reaches(other).contains_key(module)).cloned().collect();
        // The shortest way back to `module`, walked backwards.
        let mut circle = vec![module.clone()];
        let mut at = found[module].clone();
        while &at != module {
            circle.push(at.clone());
            at = found[&at].clone();
        }
        circle.push(module.clone());
        circle.reverse();
        let modules = group.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(", ");
        let files = circle.iter().map(file).collect::<Vec<_>>().join(" → ");
        reported.extend(group);
        out.push(Circle { modules, files });
    }
    out
}
