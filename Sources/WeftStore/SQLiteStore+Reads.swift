import GRDB
import WeftCore

// MARK: - Reads

extension SQLiteStore {
    public func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int) throws -> [StoredOp] {
        precondition(limit >= 1 && limit <= StoreLimits.opsPerQueryMax, "query between 1 and opsPerQueryMax ops")
        return try withDatabase("reading ops by origin") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectOpsByOrigin)
            select.bind(1, origin.rawValue)
            select.bind(2, sequence)
            select.bind(3, Int64(limit))
            return try storedOps(select)
        }
    }

    public func ops(after position: LogPosition?, limit: Int) throws -> [StoredOp] {
        precondition(limit >= 1 && limit <= StoreLimits.opsPerQueryMax, "query between 1 and opsPerQueryMax ops")
        return try withDatabase("reading ops") { db in
            let select: SQLiteStatement
            if let position {
                select = try SQLiteStatement(db, SQLiteSchema.selectOpsAfterPosition)
                select.bind(1, position.origin.rawValue)
                select.bind(2, position.sequence)
                select.bind(3, Int64(limit))
            } else {
                select = try SQLiteStatement(db, SQLiteSchema.selectOpsFirst)
                select.bind(1, Int64(limit))
            }
            return try storedOps(select)
        }
    }

    public func allOps() throws -> [StoredOp] {
        try withDatabase("reading all ops") { db in
            try storedOps(try SQLiteStatement(db, SQLiteSchema.selectAllOps)).sorted { $0.op.stamp < $1.op.stamp }
        }
    }

    public func op(_ stamp: Stamp) throws -> StoredOp? {
        try withDatabase("reading an op") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectOp)
            select.bind(1, stamp.replica.rawValue)
            select.bind(2, StampKey.bytes(stamp))
            return try storedOps(select).first
        }
    }

    public func opCount() throws -> Int {
        try withDatabase("counting ops") { db in Int(try SQLiteStatement(db, SQLiteSchema.countOps).scalarInt()) }
    }

    /// Decodes the rows (stamp, status, body, origin, sequence) of a query. Call inside ``withDatabase(_:_:)``.
    private func storedOps(_ select: SQLiteStatement) throws -> [StoredOp] {
        let marks = cachedMarks
        let local = cachedIdentity.replica
        var result: [StoredOp] = []
        try select.forEachRow {
            guard let stamp = StampKey.stamp(select.blob(0)) else {
                throw StoreError.corruptOp(stamp: nil, reason: "its key is not a 16-byte stamp")
            }
            let op: Op
            do {
                op = try OpCodec.decode(select.blob(2))
            } catch {
                throw StoreError.corruptOp(stamp: stamp, reason: "\(error)")
            }
            guard op.stamp == stamp else {
                throw StoreError.corruptOp(stamp: stamp, reason: "its body holds op \(op.stamp.text)")
            }
            // The row's key places the op in its origin's sequence; a body that says otherwise would leave
            // a gap there (and a second op at another place), which no later op could fill.
            let (origin, sequence) = (select.uint64(3), select.uint64(4))
            guard op.origin.rawValue == origin, op.sequence == sequence else {
                throw StoreError.corruptOp(
                    stamp: stamp,
                    reason: "its body says op \(op.sequence) of replica \(op.origin), but it is filed as op "
                        + "\(sequence) of replica \(ReplicaID(rawValue: origin)?.description ?? "0")")
            }
            var recorded: OpStatus?
            if !select.isNull(1) {
                guard let raw = UInt8(exactly: select.int64(1)), let status = OpStatus(rawValue: raw) else {
                    throw StoreError.corruptOp(stamp: stamp, reason: "unknown status \(select.int64(1))")
                }
                recorded = status
            }
            let status = marks.status(recorded: recorded, origin: op.origin, sequence: op.sequence, local: local)
            result.append(StoredOp(op: op, status: status))
        }
        return result
    }

    public func readTree(at path: Path) throws -> Value {
        try withDatabase("reading the tree") { db in try SQLiteTree(db, location: self.path).read(at: path) }
    }

    public func readTreeSlice(_ reader: inout TreeSliceReader, rowsMax: Int) throws {
        precondition(rowsMax >= 1 && !reader.isFinished, "read a positive number of rows of an unfinished tree")
        try withDatabase("reading the tree") { db in
            // Moved out of the reader so that adding rows never copies what was built (copy on write).
            var builder = reader.builder ?? TreeBuilder(path: .root, location: path)
            reader.builder = nil
            let select: SQLiteStatement
            if let last = reader.lastText {
                select = try SQLiteStatement(db, SQLiteSchema.selectNodesAfter)
                select.bind(1, last)
                select.bind(2, Int64(rowsMax))
            } else {
                select = try SQLiteStatement(db, SQLiteSchema.selectNodesFirst)
                select.bind(1, Int64(rowsMax))
            }
            var count = 0
            var last: String?
            try select.forEachRow {
                let encoded = select.blob(1)
                try select.withText(0) { try builder.add(text: $0, encoded: encoded) }
                count += 1
                if count == rowsMax { last = select.text(0) }
            }
            reader.builder = builder
            reader.rowsRead += count
            if let last {
                reader.lastText = last
            } else {
                reader.finish()
            }
        }
    }

    public func treeLeafCount() throws -> Int {
        try withDatabase("counting tree leaves") { db in try SQLiteTree(db, location: path).leafCount() }
    }

    public func readBase(at path: Path) throws -> Value {
        try withDatabase("reading the base") { db in
            try BaseOverlay.read(try SQLiteTree(db, location: self.path), at: path)
        }
    }

    public func baseOverrides() throws -> [BaseOverride] {
        try withDatabase("reading the base overrides") { db in
            try SQLiteTree(db, location: path).overrides(lower: "/", upper: "0")
        }
    }

    public func peerVectors() throws -> [ReplicaID: VersionVector] {
        try withDatabase("reading peer vectors") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectPeers)
            var result: [ReplicaID: VersionVector] = [:]
            try select.forEachRow {
                guard let peer = ReplicaID(rawValue: select.uint64(0)) else {
                    throw StoreError.corrupt(path: path, reason: "a peer has replica id 0")
                }
                do {
                    var reader = ByteReader(select.blob(1))
                    result[peer] = try OpCodec.readVersionVector(from: &reader)
                    guard reader.isAtEnd else {
                        throw CoreError.malformedEncoding(offset: reader.offset, reason: "trailing bytes")
                    }
                } catch {
                    throw StoreError.corrupt(
                        path: path, reason: "the version vector of peer \(peer) is damaged: \(error)")
                }
            }
            return result
        }
    }

    public func compactedTouches() throws -> [CompactedTouch] {
        try withDatabase("reading the touches of compacted ops") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectTouches)
            var result: [CompactedTouch] = []
            // Rows come in key order (the table's own, so the order costs no sort), and each path shares
            // its leading keys with the one before: the reader takes them from it.
            var reader = StoredPathReader()
            try select.forEachRow {
                guard let touchPath = select.withText(0, { reader.path($0) }) else {
                    throw StoreError.corrupt(
                        path: path, reason: "a compacted touch has a damaged path: \(select.text(0).debugDescription)")
                }
                guard let origin = ReplicaID(rawValue: select.uint64(1)) else {
                    throw StoreError.corrupt(path: path, reason: "a compacted touch at \(touchPath) has replica id 0")
                }
                let sequence = select.uint64(2)
                guard sequence >= 1 else {
                    throw StoreError.corrupt(path: path, reason: "a compacted touch at \(touchPath) has sequence 0")
                }
                result.append(CompactedTouch(path: touchPath, origin: origin, sequence: sequence))
            }
            return result.sortedForStore()
        }
    }

    public func members() throws -> [ReplicaID] {
        try withDatabase("reading the membership") { db in
            let select = try SQLiteStatement(db, SQLiteSchema.selectMembers)
            var result: [ReplicaID] = []
            try select.forEachRow {
                guard let member = ReplicaID(rawValue: select.uint64(0)) else {
                    throw StoreError.corrupt(path: path, reason: "a member has replica id 0")
                }
                result.append(member)
            }
            return result.sorted()
        }
    }
}
