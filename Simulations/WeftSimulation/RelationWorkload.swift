import WeftCore

/// Relations in the simulator: replicas link, relink, unlink and delete objects under `/rel`
/// concurrently, each change planned by ``RelationPlanner`` on the writer's state at the moment it
/// writes, and the converged state is checked against ``RelationIntegrity``.
///
/// Objects `/rel/o0` … `/rel/o7` have a `name`, a one-to-one `one` (deleting its target deletes the
/// source: cascade), a one-to-one `owner` (nullify) and a one-to-many `many` (nullify).
enum RelationWorkload {
    static let root = try! Path("/rel")
    static let objectCount = 8
    static let one = try! Path("one")
    static let owner = try! Path("owner")
    static let many = try! Path("many")

    /// One relation change, drawn before the run; made into an op when it is written.
    enum Step: Hashable {
        case create(Int)
        case link(Int, field: Int, to: Int)
        case unlink(Int, field: Int)
        case insert(Int, to: Int)
        case remove(Int, to: Int)
        case delete(Int)
    }

    static func object(_ index: Int) -> Path { join(root, [Key(unchecked: "o\(index)")]) }

    /// `base` followed by `keys` (the schema's paths are a few keys deep: never past the depth limit).
    static func join(_ base: Path, _ keys: [Key]) -> Path { (try? Path(keys: base.keys + keys)) ?? base }

    /// A step drawn from `rng`, hot objects more often.
    static func draw(rng: inout SeededGenerator) -> Step {
        func pick() -> Int { rng.chance(0.4) ? Int(rng.below(3)) : Int(rng.below(UInt64(objectCount))) }
        let roll = rng.below(100)
        let a = pick()
        let b = pick()
        switch roll {
        case 0..<22: return .create(a)
        case 22..<50: return .link(a, field: Int(rng.below(2)), to: b)
        case 50..<58: return .unlink(a, field: Int(rng.below(2)))
        case 58..<76: return .insert(a, to: b)
        case 76..<84: return .remove(a, to: b)
        default: return .delete(a)
        }
    }

    /// The op kind and path of `step` planned on `state`: a guarded batch, or (when the change
    /// cannot be planned, such as a link to a deleted object) a plain creation of an object, as an
    /// app would then do. `sabotage` may drop the plan's reads.
    static func op(
        of step: Step, index: Int, state: Value, read: VersionVector, sabotage: Sabotage?
    ) -> (path: Path, kind: OpKind, planned: Bool) {
        var planner = RelationPlanner { state.value(at: $0) }
        let fallback: Int
        do {
            switch step {
            case .create(let a):
                fallback = a
            case .link(let a, let field, let b):
                fallback = b
                try planner.link(
                    source: object(a), field: field == 0 ? one : owner, to: object(b),
                    rule: field == 0 ? .cascade : .nullify)
            case .unlink(let a, let field):
                fallback = a
                try planner.unlink(source: object(a), field: field == 0 ? one : owner)
            case .insert(let a, let b):
                fallback = b
                try planner.insert(source: object(a), field: many, target: object(b), rule: .nullify)
            case .remove(let a, let b):
                fallback = a
                try planner.remove(source: object(a), field: many, target: object(b))
            case .delete(let a):
                fallback = a
                try planner.delete([object(a)])
            }
            let plan = try planner.plan()
            if !plan.isEmpty {
                let (path, kind) = guardedBatch(plan, read: read, sabotage: sabotage)
                return (path, kind, true)
            }
        } catch {
            // Planning reads a state every replica has; only a missing target stops it.
        }
        let create = MergeChild(relative: join(.root, ["name"]), value: .string("n\(index)"))
        return (object(fallback), .merge([create]), false)
    }

    /// The guarded batch of `plan`, or what a sabotage makes of it.
    static func guardedBatch(
        _ plan: RelationPlanner.Plan, read: VersionVector, sabotage: Sabotage?
    ) -> (Path, OpKind) {
        var reads = plan.reads
        var writes = plan.writes
        switch sabotage {
        case .relationsUnserialized?:
            reads.removeAll { $0 == RelationLayout.clockPath }
            writes.removeAll { $0.path == RelationLayout.clockPath }
        case .relationsBlind?:
            return (commonAncestor(writes), .batch(writes))
        default: break
        }
        do {
            return try OpKind.guarded(read: read, reads: reads, writes: writes)
        } catch {
            // The planner keeps to the guarded batch's limits; a batch it refuses is written blind,
            // which the integrity check would then catch.
            return (commonAncestor(writes), .batch(writes))
        }
    }

    static func commonAncestor(_ writes: [Write]) -> Path {
        guard let first = writes.first?.path else { return .root }
        return writes.dropFirst().reduce(first) { $0.commonAncestor(with: $1.path) }
    }

    /// Every link node of the schema in `state`.
    static func links(in state: Value) -> [Path] {
        var result: [Path] = []
        for index in 0..<objectCount {
            let object = object(index)
            result.append(join(object, one.keys))
            result.append(join(object, owner.keys))
            for (entry, _) in state.value(at: join(object, many.keys)).children {
                result.append(join(object, many.keys + [entry]))
            }
        }
        return result
    }

    /// The first integrity violation of `state`, if any.
    static func violation(in state: Value) -> String? {
        let found = RelationIntegrity.violations(in: state, links: links(in: state))
        guard let first = found.first else { return nil }
        return "\(found.count) relation violations, first \(first)"
    }
}
