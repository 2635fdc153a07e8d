/// The integrity rule of relations, checked on a state: every link's target exists and holds the
/// matching back-link, and every back-link's source holds the link to the object that keeps it.
///
/// Links are found from the paths given (the schema knows which fields are relations); back-links are
/// found by walking the whole state for `~in` children. Used by the simulator's checker and the tests.
///
/// ```swift
/// let broken = RelationIntegrity.violations(in: state, links: [try Path("/tasks/t1/assignee")])
/// ```
public enum RelationIntegrity {
    /// One broken rule: where, and what.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        public var path: Path
        public var message: String

        public var description: String { "\(path): \(message)" }
    }

    /// Every violation in `state`, for the link nodes `links` (a node holding null is no link).
    public static func violations(in state: Value, links: [Path]) -> [Violation] {
        var found: [Violation] = []
        for link in links {
            let value = state.value(at: link)
            guard !value.isNull else { continue }
            guard let target = RelationLayout.target(of: value) else {
                found.append(Violation(path: link, message: "holds \(value.jsonString()), not a link"))
                continue
            }
            guard RelationLayout.exists(state.value(at: target)) else {
                found.append(Violation(path: link, message: "links to \(target), which does not exist"))
                continue
            }
            guard let node = try? RelationLayout.backLinkPath(of: link, on: target),
                RelationLayout.BackLink(state.value(at: node))?.link == link
            else {
                found.append(Violation(path: link, message: "links to \(target), which holds no back-link for it"))
                continue
            }
        }
        var backLinks: [(holder: Path, key: Key, entry: Value)] = []
        gather(state, at: [], into: &backLinks)
        for (holder, key, entry) in backLinks {
            let at = Path(uncheckedKeys: holder.keys + [RelationLayout.backLinksKey, key])
            guard let backLink = RelationLayout.BackLink(entry), RelationLayout.escape(backLink.link) == key.text else {
                found.append(Violation(path: at, message: "holds \(entry.jsonString()), not a back-link"))
                continue
            }
            guard RelationLayout.target(of: state.value(at: backLink.link)) == holder else {
                found.append(Violation(path: at, message: "names \(backLink.link), which does not link here"))
                continue
            }
            guard backLink.source.isAncestorOrSelf(of: backLink.link), !state.value(at: backLink.source).isNull else {
                found.append(Violation(path: at, message: "names the source \(backLink.source), which does not hold it"))
                continue
            }
        }
        return found
    }

    /// Every back-link entry in `value`, with the object that holds it.
    private static func gather(_ value: Value, at keys: [Key], into found: inout [(holder: Path, key: Key, entry: Value)]) {
        guard case .object(let children) = value else { return }
        for (key, child) in children {
            guard key == RelationLayout.backLinksKey else {
                gather(child, at: keys + [key], into: &found)
                continue
            }
            for (entryKey, entry) in child.children {
                found.append((Path(uncheckedKeys: keys), entryKey, entry))
            }
        }
    }
}
