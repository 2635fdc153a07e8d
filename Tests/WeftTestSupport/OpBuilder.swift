import WeftCore

// The one place tests build ops by hand. Test suites keep short local helpers for their call sites
// (`op(3, "/n", .set(.int(1)))`), and every helper makes its op here, so that a change to how ops are
// stamped or built is made once.

extension Op {
    /// A test op: `origin`'s op number `sequence`, stamped at `millis` with counter `counter`, at `path`.
    ///
    /// ```swift
    /// let op = try Op.make(.set(.int(1)), at: "/n", origin: alice, millis: 1_000, sequence: 1)
    /// ```
    /// - Throws: `CoreError` when `path` is not a valid path.
    public static func make(
        _ kind: OpKind, at path: String, origin: ReplicaID, millis: UInt64, sequence: UInt64, counter: UInt16 = 0
    ) throws -> Op {
        make(kind, at: try Path(path), origin: origin, millis: millis, sequence: sequence, counter: counter)
    }

    /// A test op at a path already built, as the form taking a path string makes it.
    public static func make(
        _ kind: OpKind, at path: Path, origin: ReplicaID, millis: UInt64, sequence: UInt64, counter: UInt16 = 0
    ) -> Op {
        Op(stamp: Stamp(millis: millis, counter: counter, replica: origin), sequence: sequence, path: path, kind: kind)
    }
}
