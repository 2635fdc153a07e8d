import Foundation
import WeftCore

/// What deleting a link's target does to the link (see Docs/MODELS.md, "Relations and integrity").
///
/// ```swift
/// @Relation(onDelete: .cascade) var board: Board?   // deleting the board deletes this task
/// ```
public enum RelationDeleteRule: String, Sendable, Hashable, CaseIterable {
    /// The link is removed from its source: the field becomes nil, the entry leaves the collection.
    case nullify
    /// The source object is deleted with its target (recursively; each object once).
    case cascade

    var core: RelationLayout.DeleteRule {
        switch self {
        case .nullify: return .nullify
        case .cascade: return .cascade
        }
    }
}

/// Relation changes recorded on a model writer: planned by WeftCore's `RelationPlanner` on what the
/// writer reads (the state of its first read, with the writer's own earlier writes laid on top), each
/// read recorded so that the commit applies only if none of them changed, then recorded as the writer's
/// sets, the relation clock's included.
enum RelationWriting {
    /// Plans with `body` on `writer`'s reads and records the plan.
    /// - Throws: `WeftError` with code `invalidValue` when the target does not exist, `invalidPath` for a
    ///   path too long to name a link, `valueTooLarge` for a change past the batch limits.
    static func record(
        on writer: any ModelWriter, access: ReplicaAccess, _ body: (inout RelationPlanner) throws -> Void
    ) throws {
        // The writer's reads come from one snapshot that lacks its own writes: a target inserted or an
        // object deleted earlier in the same transaction must be seen as such.
        let pending = writer.pendingWrites
        var planner = RelationPlanner { path in
            guard let value = try writer.recordRead(access.root.node(at: path)) else {
                throw WeftError(.invalidValue, "this writer cannot read, so it cannot keep relations", path: path.description)
            }
            return overlay(value, at: path, with: pending)
        }
        let plan: RelationPlanner.Plan
        do {
            try body(&planner)
            plan = try planner.plan()
        } catch let error as RelationError {
            throw weftError(error)
        } catch let error as CoreError {
            throw WeftError(error)
        }
        for path in plan.reads { _ = try writer.recordRead(access.root.node(at: path)) }
        for write in plan.writes {
            guard case .set(let path, let value) = write else { continue }
            try writer.recordSet(value, at: access.root.node(at: path))
        }
    }

    /// Records the deletion of the object at `node`: the node cleared, with what the links into it ask
    /// (nullify or cascade) and the back-links of its own links removed from their targets, in the
    /// writer's one op.
    static func recordDeletion(of node: DataNode, on writer: any ModelWriter) throws {
        try record(on: writer, access: node.access) { try $0.delete([node.location]) }
    }

    /// `value`, read at `path`, as `writes` (applied in order) leave it. Increments are left out: no link,
    /// back-link or object's existence rests on one.
    static func overlay(_ value: Value, at path: Path, with writes: [Write]) -> Value {
        var value = value
        func apply(_ written: Path, _ newValue: Value) {
            if let below = written.relativeKeys(of: path) {
                value = newValue.value(at: below)
            } else if let inside = path.relativeKeys(of: written) {
                _ = value.write(newValue, at: inside)
            }
        }
        for write in writes {
            switch write {
            case .set(let written, let newValue):
                apply(written, newValue)
            case .merge(let base, let children):
                for child in children {
                    guard let written = try? base.appending(child.relative) else { continue }
                    apply(written, child.value)
                }
            case .increment:
                continue
            }
        }
        return value
    }

    static func weftError(_ error: RelationError) -> WeftError {
        switch error {
        case .targetMissing(let path):
            return WeftError(.invalidValue, error.description, path: path.description)
        case .pathTooLong(let path), .invalidPath(let path):
            return WeftError(.invalidPath, error.description, path: path.description)
        case .tooManyWrites, .tooManyReads:
            return WeftError(.valueTooLarge, error.description)
        }
    }
}

/// What the relation fields share.
enum RelationFields {
    /// The object a stored link names, bound to the model's replica; nil for anything else.
    static func target<T: Model>(_ value: Value?, of model: Model, as type: T.Type) -> T? {
        guard let value, let path = RelationLayout.target(of: value), let node = model.node else { return nil }
        let object = T()
        object.source = .live(node.access.root.node(at: path))
        return object
    }

    /// The node of a stored target in the replica of `field`, or a clear error.
    static func storedNode(of target: Model, for field: DataNode) throws -> DataNode {
        guard let node = target.node else {
            throw WeftError(
                .invalidValue, "a link to a \(type(of: target)) that is not stored: insert it first", path: field.path)
        }
        try field.access.checkOwns(node)
        return node
    }

    /// The object holding a field (the field node's parent) and the field's path below it.
    static func source(of field: DataNode) throws -> (source: Path, field: Path) {
        guard let source = field.location.parent, let key = field.location.keys.last else {
            throw WeftError(.invalidPath, "a relation field needs an object above it", path: field.path)
        }
        return (source, try WeftError.mapping(path: field.path) { try Path(keys: [key]) })
    }

    /// The stored path of the object a comparand names (for `\.$assignee == ann` in queries).
    static func stored(_ target: Model?, at path: Path) throws -> Value {
        guard let target else { return .null }
        guard let node = target.node else {
            throw WeftError(
                .invalidValue, "a link to a \(type(of: target)) that is not stored: insert it first",
                path: path.description)
        }
        return .string(node.path)
    }
}
