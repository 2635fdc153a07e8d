import Foundation
import WeftCore
import WeftStore

// Local writes: stamp, apply under the lock, queue for group commit, tell the listeners.

extension Replica {
    /// Stamps one op of `kind` at `path`, applies it to the state and queues it for group commit.
    ///
    /// The low-level door of every write; apps use `DataNode`. Waits while the group commit holds its
    /// maximum of pending ops, and while the replica loads.
    ///
    /// ```swift
    /// let receipt = try replica.submit(path: try Path("/counters/visits"), kind: .increment(by: .int(1), from: .int(0)),
    ///                                  at: .now)
    /// try await receipt.wait(for: .durable)
    /// ```
    /// - Parameters:
    ///   - path: the node the op addresses.
    ///   - kind: what the op does (validated by the caller: keys, values, merge children).
    ///   - time: `.now`, or an explicit wall time no further ahead than ``ReplicaOptions/driftMillisMax``.
    /// - Returns: the receipt of the write, `.pending` (or `.rejected` when the merge refused it).
    /// - Throws: `WeftError` with code `shutDown`, `clockRefused`, `valueTooLarge`, or the code of a failed
    ///   commit or load.
    @discardableResult
    @_spi(Engine) public func submit(path: Path, kind: OpKind, at time: WeftTime = .now) throws -> WriteReceipt {
        try write(at: time) { _ in (path, kind) }.receipt
    }

    /// Stamps and applies a push: a new child of `parent` keyed by the push id of the op's own stamp, so
    /// that pushes sort chronologically across replicas.
    ///
    /// ```swift
    /// let (key, receipt) = try replica.submitPush(parent: try Path("/chat"), value: .string("hi"), at: .now)
    /// ```
    /// - Throws: as ``submit(path:kind:at:)``, and `invalidPath` when `parent` is at the depth limit.
    public func submitPush(parent: Path, value: Value, at time: WeftTime = .now) throws -> (
        key: String, receipt: WriteReceipt
    ) {
        let (op, receipt) = try write(at: time) { stamp in
            do {
                return (try parent.child(PushID.make(from: stamp)), .set(value))
            } catch {
                throw WeftError.wrapping(error)
            }
        }
        return (op.path.key ?? "", receipt)
    }

    /// A fresh push id for a child made without a write; it sorts after every push id made before it,
    /// here or (after a restart) later.
    ///
    /// ```swift
    /// let key = try replica.reservePushKey(at: .now)
    /// ```
    /// - Throws: `WeftError` with code `shutDown` or `clockRefused`.
    public func reservePushKey(at time: WeftTime = .now) throws -> String {
        condition.lock()
        defer { condition.unlock() }
        _ = try writableEngine()
        let stamp = try nextStamp(at: time)
        // The stamp is in no op: an entry of its own carries the clock to the file.
        committer.enqueue(CommitEntry(clockTime: clock.lastTime))
        return PushID.make(from: stamp)
    }

    /// Registers a deterministic function for `call` ops; ops that were waiting for it apply now.
    ///
    /// ```swift
    /// try replica.register(name: "transfer", version: 1, Workload.transfer)
    /// ```
    /// - Parameters:
    ///   - name: the name `call` ops give (1 to `CoreLimits.functionNameBytesMax` bytes).
    ///   - version: the version `call` ops give; register a new version to change what a name does.
    ///   - function: `(current, arguments) -> new value`, nil to refuse the call (see ``RegisteredFunction``).
    /// - Throws: `WeftError` with code `invalidValue` for a name no `call` op can carry (empty, or longer
    ///   than `CoreLimits.functionNameBytesMax` bytes).
    public func register(name: String, version: UInt32, _ function: @escaping RegisteredFunction) throws {
        try ReplicaAccess.checkFunctionName(name)
        condition.lock()
        defer { condition.unlock() }
        registrations.append(Registration(name: name, version: version, function: function))
        guard let engine else { return }
        let report = engine.register(name: name, version: version, function)
        guard !isShuttingDown, committer.failed == nil else { return }
        record(report, records: [], isLocalPending: false, engine: engine)
    }

    // MARK: - The road of a write

    /// Makes one local op from a stamp, applies it and queues it.
    private func write(at time: WeftTime, _ make: (Stamp) throws -> (Path, OpKind)) throws -> (
        op: Op, receipt: WriteReceipt
    ) {
        committer.reserve(ops: 1)
        defer { committer.release(ops: 1) }
        condition.lock()
        defer { condition.unlock() }
        let engine = try writableEngine()
        let stamp = try nextStamp(at: time)
        let (path, kind) = try make(stamp)
        let op = Op(stamp: stamp, sequence: nextSequence, path: path, kind: kind)
        let encoded = OpCodec.encode(op)
        guard encoded.count <= CoreLimits.opBytesMax else {
            throw WeftError(
                .valueTooLarge, "the op is \(encoded.count) bytes encoded; at most \(CoreLimits.opBytesMax) fit",
                path: path.description)
        }
        precondition(instance.claimSequence() == op.sequence, "the op takes the sequence it was made with")
        let report = engine.apply([op])
        let receipt = WriteReceipt(stamp: stamp, sequence: op.sequence, book: receipts)
        let status: OpStatus
        if case .rejected(let rejection) = report.outcomes[stamp] {
            receipts.reject(sequence: op.sequence, because: rejection)
            status = .rejected
        } else {
            status = .durable
        }
        record(report, records: [OpRecord(op, encoded: encoded, status: status)], isLocalPending: true, engine: engine)
        return (op, receipt)
    }

    /// A new stamp for a local event at `time`. Call with `condition` held.
    /// - Throws: `WeftError` with code `clockRefused`.
    func nextStamp(at time: WeftTime) throws -> Stamp {
        let now = options.wallClockMillis()
        var wall = now
        if case .millis(let millis) = time {
            guard millis <= CoreLimits.stampMillisMax else {
                throw WeftError(.clockRefused, "write time \(millis) ms is beyond the 48-bit range of stamps")
            }
            if millis > now, millis - now > options.driftMillisMax {
                throw WeftError(
                    .clockRefused,
                    "write time \(millis) is \(millis - now) ms ahead of the wall clock; at most "
                        + "\(options.driftMillisMax) ms are allowed")
            }
            wall = millis
        }
        do {
            return try instance.nextStamp(wallMillis: wall)
        } catch {
            throw WeftError.wrapping(error)
        }
    }

    /// Queues what `report` says changed (new ops, tree writes, base preserves, revised outcomes of our
    /// ops) and posts it to the listeners. Call with `condition` held, in the order of the applies.
    func record(
        _ report: ApplyReport, records: [OpRecord], isLocalPending: Bool, engine: MergeEngine
    ) {
        var statusChanges: [StoreBatch.StatusChange] = []
        if report.outcomes.count > records.count {
            reviseOutcomes(report, records: records, into: &statusChanges, engine)
        }
        guard !records.isEmpty || !report.changes.isEmpty || !statusChanges.isEmpty else { return }
        var preserves: [Path] = []
        for change in report.changes {
            if let region = regions.claim(change.path, base: engine.base) { preserves.append(region) }
        }
        let clockTime = clock.lastTime
        let indexWrites = queryIndexes.follow(report.changes) { engine.value(at: $0) }
        // Ops merged from a peer commit at once: the peer waits for them to be durable here (its acks,
        // and the stability of its writes, follow); local writes wait a little to share a commit.
        committer.enqueue(urgent: !isLocalPending && !records.isEmpty) { pending in
            for record in records { pending.append(record: record) }
            for region in preserves { pending.append(preserve: region) }
            for change in report.changes {
                // A scalar replaced by a scalar or removed is one row in the store, and so is a scalar
                // written where the engine saw neither an object nor a scalar above.
                let oneRow =
                    change.isOneRow || (!change.old.isNull && !change.old.isObject && !change.new.isObject)
                pending.append(
                    treeWrite: StoreBatch.TreeWrite(path: change.path, value: change.new, replacesScalar: oneRow))
            }
            for statusChange in statusChanges { pending.append(statusChange: statusChange) }
            for write in indexWrites { pending.append(indexWrite: write) }
            pending.closeEntry(clockTime: clockTime)
        }
        if !report.changes.isEmpty || !report.outcomes.isEmpty {
            notifier.post(
                ChangeBatch(changes: report.changes, isLocalPending: isLocalPending, outcomes: report.outcomes))
        }
    }

    /// Records the revised outcomes of our ops already known: a late op can reject an earlier increment
    /// or transaction (its receipt becomes rejected), or apply a call that was waiting.
    func reviseOutcomes(
        _ report: ApplyReport, records: [OpRecord], into statusChanges: inout [StoreBatch.StatusChange],
        _ engine: MergeEngine
    ) {
        let new = Set(records.map(\.op.stamp))
        for (stamp, outcome) in report.outcomes where stamp.replica == replicaID && !new.contains(stamp) {
            guard let sequence = engine.op(for: stamp)?.sequence else { continue }
            switch outcome {
            case .rejected(let rejection):
                statusChanges.append(.op(stamp, sequence: sequence, .rejected))
                receipts.reject(sequence: sequence, because: rejection)
            case .applied:
                statusChanges.append(.op(stamp, sequence: sequence, .durable))
                receipts.revive(sequence: sequence)
            case .waiting:
                continue
            }
        }
    }
}
