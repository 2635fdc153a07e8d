import WeftCore

/// The checked writes (and read paths) of a batch or a held transaction, recorded one call at a time.
///
/// `WriteBatch` (performChanges) and `Transaction` take the same writes with the same checks: each
/// method checks its input at once and throws without recording anything when it is invalid. The
/// recorder is a value; its owner serializes access (the batch runs in one closure, the transaction
/// holds it under a lock).
struct WriteRecorder {
    let access: ReplicaAccess
    let time: WeftTime
    private(set) var writes: [Write] = []
    /// Nodes written wholly (sets, merge children): a `runTransaction` in flight on a related node
    /// loses to them (`overridden`).
    private(set) var blindPaths: [Path] = []
    /// The paths read: none inside another.
    private(set) var reads: [Path] = []
    /// The state every read comes from, taken at the first read, and the version vector it reflects
    /// (the read record of the op).
    private(set) var snapshot: (tree: Value, read: VersionVector)?
    private var bytes = 0

    init(access: ReplicaAccess, time: WeftTime) {
        self.access = access
        self.time = time
    }

    /// True when nothing was written or read.
    var isEmpty: Bool { writes.isEmpty && reads.isEmpty }

    // MARK: - Writes from the API's shapes

    mutating func set(_ value: (some Encodable)?, at node: DataNode) throws {
        try check(node)
        let encoded = try access.state.coding.encodeUnchecked(value, at: node.location)
        try append(
            .set(node.location, try ValueCheck.validated(encoded, at: node.location, bytes: &bytes)),
            blind: [node.location])
    }

    mutating func set(_ raw: RawMarker, _ json: Any?, at node: DataNode) throws {
        try check(node)
        let value = try RawJSON.value(of: json, at: node.location)
        try append(
            .set(node.location, try ValueCheck.validated(value, at: node.location, bytes: &bytes)),
            blind: [node.location])
    }

    mutating func clear(at node: DataNode) throws {
        try check(node)
        try append(.set(node.location, .null), blind: [node.location])
    }

    mutating func merge(with value: some Encodable, at node: DataNode) throws {
        try check(node)
        let children = try node.mergeChildren(of: access.state.coding.encodeUnchecked(value, at: node.location))
        try recordMerge(children, at: node.location)
    }

    mutating func merge(_ raw: RawMarker, with json: [String: Any], at node: DataNode) throws {
        try check(node)
        try recordMerge(try node.rawMergeChildren(json), at: node.location)
    }

    mutating func increment(from start: Number, by step: Number, at node: DataNode) throws {
        try check(node)
        try recordIncrement(at: node.location, by: step, from: start)
    }

    mutating func push(_ value: (some Encodable)?, under node: DataNode) throws -> DataNode {
        try check(node)
        let child = try node.createChild(at: time)
        try set(value, at: child)
        return child
    }

    mutating func push(_ raw: RawMarker, _ json: Any?, under node: DataNode) throws -> DataNode {
        try check(node)
        let child = try node.createChild(at: time)
        try set(raw, json, at: child)
        return child
    }

    // MARK: - Core writes and reads

    /// Records a write built in WeftCore (a helper that computes writes from paths), with the checks
    /// the API's own forms make: values, merge children and increments as they would be written.
    mutating func record(_ write: Write) throws {
        try checkCount(at: write.path)
        switch write {
        case .set(let path, let value):
            try append(.set(path, try ValueCheck.validated(value, at: path, bytes: &bytes)), blind: [path])
        case .merge(let path, let children):
            try recordMerge(children, at: path)
        case .increment(let path, let by, let from):
            try recordIncrement(at: path, by: by, from: from)
        }
    }

    /// Reads `path` in the snapshot every read of this recorder comes from (taken now when this is the
    /// first read), and records that it was read.
    mutating func read(_ path: Path) throws -> Value {
        let current = snapshot ?? access.consistentState()
        try recordRead(path)
        snapshot = current
        return current.tree.value(at: path)
    }

    /// Records that `path` was read. A path inside one already read adds nothing: every op that could
    /// change it is related to the outer path too. One that holds paths read before replaces them.
    private mutating func recordRead(_ path: Path) throws {
        if reads.contains(where: { $0.isAncestorOrSelf(of: path) }) { return }
        let kept = reads.filter { !path.isAncestorOrSelf(of: $0) }
        guard kept.count < CoreLimits.guardedReadsMax else {
            throw WeftError(
                .valueTooLarge, "a transaction reads at most \(CoreLimits.guardedReadsMax) separate paths",
                path: path.description)
        }
        reads = kept + [path]
    }

    /// Appends the writes and reads of `other`, checked again as a whole (sizes and counts). Both must
    /// read from one state when both read.
    mutating func append(contentsOf other: WriteRecorder) throws {
        if let theirs = other.snapshot, let mine = snapshot, theirs.read != mine.read {
            throw WeftError(
                .invalidValue, "both transactions read, from two different states of the replica; read in one of them")
        }
        var merged = self
        for write in other.writes { try merged.record(write) }
        for path in other.reads { try merged.recordRead(path) }
        if merged.snapshot == nil { merged.snapshot = other.snapshot }
        self = merged
    }

    // MARK: - Checks

    func check(_ node: DataNode) throws {
        try access.checkOwns(node)
        try checkCount(at: node.location)
    }

    private func checkCount(at path: Path) throws {
        guard writes.count < CoreLimits.batchPartsMax else {
            throw WeftError(
                .valueTooLarge, "a batch holds at most \(CoreLimits.batchPartsMax) writes", path: path.description)
        }
    }

    private mutating func recordMerge(_ children: [MergeChild], at path: Path) throws {
        let checked = try ValueCheck.mergeChildren(children, under: path, bytes: &bytes)
        try append(.merge(path, checked), blind: checked.compactMap { try? path.appending($0.relative) })
    }

    private mutating func recordIncrement(at path: Path, by step: Number, from start: Number) throws {
        try Number.checkFinite(start, step, path: path.description)
        bytes += 32
        try append(.increment(path, by: step, from: start), blind: [])
    }

    private mutating func append(_ write: Write, blind: [Path]) throws {
        guard bytes <= ValueCheck.valueBytesMax else {
            throw WeftError(
                .valueTooLarge, "the batch needs more than \(ValueCheck.valueBytesMax) bytes; split it",
                path: write.path.description)
        }
        writes.append(write)
        blindPaths.append(contentsOf: blind)
    }
}
