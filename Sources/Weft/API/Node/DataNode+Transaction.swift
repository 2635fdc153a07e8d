import Dispatch
import WeftCore

/// What a transaction closure asks for, given the node's current value.
///
/// ```swift
/// try await seats.runTransaction { current in
///     guard case .int(let left) = current, left > 0 else { return .abort }
///     return .set(.int(left - 1))
/// }
/// ```
public enum TransactionOperation: Sendable, Hashable {
    /// Replace the node's value (null deletes it).
    case set(Value)
    /// Delete the node: the same as `.set(.null)`.
    case clear
    /// Write nothing; the transaction ends as aborted by the closure.
    case abort
}

/// How a transaction ended.
///
/// ```swift
/// let result = try await counter.runTransaction { .set(.int(($0.intValue ?? 0) + 1)) }
/// if result.isCommitted { print("now", result.value) }
/// ```
public struct TransactionResult: Sendable {
    /// Committed, pending, or aborted and why.
    public enum Status: Sendable, Hashable {
        /// The closure's result was written and reached the awaited status (``TransactionResult/waitedFor``)
        /// without being rejected. With the default, `.stable` on a replica that syncs, the outcome can no
        /// longer change.
        case committed
        /// The closure's result was written, but did not reach the awaited status within the timeout (the
        /// replica is offline, or a member of its group is away): it may still be rejected. Follow
        /// ``TransactionResult/receipt``: a rejection means the transaction did not happen, and should be
        /// run again.
        case pending
        /// Nothing of this transaction stands.
        case aborted(AbortReason)
    }

    /// Why a transaction was aborted.
    public enum AbortReason: Sendable, Hashable {
        /// The closure returned `.abort`.
        case byClosure
        /// Every attempt (``WeftLimits/transactionRetriesMax``) read a value that another write changed.
        case retriesExhausted
        /// A local `set`, `clear`, `merge`, `push` or batch wrote the node (or an ancestor or descendant)
        /// while the transaction ran, and the transaction lost: it is not retried over the app's own write,
        /// as Firebase does.
        case overridden
    }

    /// Committed or aborted.
    public let status: Status
    /// The committed (or pending) value, or the value the closure saw last when aborted.
    public let value: Value
    /// The committed (or pending) write, nil when aborted.
    public let receipt: WriteReceipt?
    /// How many times the closure ran.
    public let attempts: Int
    /// The status the transaction waited for its write to reach: `.stable` by default on a replica that
    /// syncs, `.durable` on one that never did, or what the caller passed as `waitingFor`.
    public let waitedFor: WriteStatus

    /// True when the transaction committed.
    public var isCommitted: Bool { status == .committed }

    init(status: Status, value: Value, receipt: WriteReceipt?, attempts: Int, waitedFor: WriteStatus) {
        self.status = status
        self.value = value
        self.receipt = receipt
        self.attempts = attempts
        self.waitedFor = waitedFor
    }
}

extension DataNode {
    /// Runs a transaction: computes the node's new value from its current one, and commits it only if no
    /// other write changed the node in between; otherwise runs the closure again on the newer value.
    ///
    /// The closure runs on the local value (local writes included). The write carries an exact record of
    /// what the closure read (the replica's version vector), so any replica that merges it can tell
    /// whether another write, made without seeing it, came first: such a transaction is rejected
    /// (`.staleRead`) on every replica alike, and here it runs again. It runs again, too, when another
    /// local write wins the race. After ``WeftLimits/transactionRetriesMax`` attempts it gives up.
    /// For a counter prefer ``increment(from:by:at:waitingFor:)``: it never conflicts.
    ///
    /// By default a replica that syncs (it listens, connects, or met a group before) reports `.committed`
    /// only once the write is `.stable`: every member holds it, and this replica holds every op stamped
    /// before it, so no late op can reject it any more. A replica that never synced waits for `.durable`.
    /// When the awaited status does not come within `timeout` (offline, or a member is away), the result
    /// is `.pending` with the write's receipt, which still tells the outcome later.
    ///
    /// ```swift
    /// let result = try await balance.runTransaction { current in
    ///     guard case .int(let cents) = current, cents >= 500 else { return .abort }
    ///     return .set(.int(cents - 500))
    /// }
    /// ```
    /// - Parameters:
    ///   - time: when each attempt's write happens.
    ///   - target: the status each attempt waits for; nil (the default) for `.stable` on a replica that
    ///     syncs and `.durable` on one that never did. A lower status answers sooner, but a `.committed`
    ///     result may then still be rejected by a late op (its receipt says so).
    ///   - timeout: how long the last attempt waits for `target` before the result is `.pending`
    ///     (default ``WeftLimits/transactionWaitSecondsDefault``).
    ///   - function: computes the operation from the current value; it may run several times.
    /// - Returns: committed with the value, pending, or aborted by the closure, by exhausted retries, or
    ///   overridden; ``TransactionResult/waitedFor`` says which status it waited for.
    /// - Throws: what `function` throws; `WeftError` with code `invalidValue`, `invalidKey`, `invalidPath`,
    ///   `valueTooLarge` for a bad result, `clockRefused` or `shutDown`.
    nonisolated(nonsending) public func runTransaction(
        at time: WeftTime = .now, waitingFor target: WriteStatus? = nil,
        timeout: Duration = .seconds(WeftLimits.transactionWaitSecondsDefault),
        _ function: (Value) throws -> TransactionOperation
    ) async throws -> TransactionResult {
        let target = target ?? (access.backend.isReplicating ? .stable : .durable)
        try target.checkIsTarget()
        guard timeout >= .zero else { throw WeftError(.invalidValue, "a transaction timeout is not negative") }
        let id = access.state.beginTransaction(at: location)
        defer { access.state.endTransaction(id) }
        var seen = Value.null
        for attempt in 1...WeftLimits.transactionRetriesMax {
            try access.checkOpen()
            // The read record first: the value read after it holds at least what it covers, so a write the
            // closure did not see is never recorded as seen (at worst a seen one is not: a spurious retry).
            // Calls waiting for a function in the node's subtree or above are left out: they are known, but
            // not in the value read.
            let read = access.backend.appliedVersionVector(for: location)
            seen = access.backend.value(at: location)
            let result: Value
            switch try function(seen) {
            case .abort:
                return TransactionResult(
                    status: .aborted(.byClosure), value: seen, receipt: nil, attempts: attempt, waitedFor: target)
            case .clear: result = .null
            case .set(let value): result = try ValueCheck.validated(value, at: location)
            }
            let receipt = try access.submit(path: location, kind: .transaction(read: read, result: result), at: time)
            guard let status = try await receipt.wait(for: target, timeout: timeout) else {
                return TransactionResult(
                    status: .pending, value: result, receipt: receipt, attempts: attempt, waitedFor: target)
            }
            guard case .rejected(let rejection) = status else {
                return TransactionResult(
                    status: .committed, value: result, receipt: receipt, attempts: attempt, waitedFor: target)
            }
            guard case .staleRead = rejection else { throw WeftError(.rejected, rejection.description, path: path) }
            if access.state.isOverridden(id) {
                return TransactionResult(
                    status: .aborted(.overridden), value: seen, receipt: nil, attempts: attempt, waitedFor: target)
            }
        }
        return TransactionResult(
            status: .aborted(.retriesExhausted), value: seen, receipt: nil, attempts: WeftLimits.transactionRetriesMax,
            waitedFor: target)
    }

    /// The completion form of ``runTransaction(at:waitingFor:timeout:_:)``.
    ///
    /// ```swift
    /// counter.runTransaction({ .set(.int(($0.intValue ?? 0) + 1)) }) { result in … }
    /// ```
    /// - Parameters:
    ///   - time: when each attempt's write happens.
    ///   - target: the status each attempt waits for (nil: `.stable` when the replica syncs, else `.durable`).
    ///   - timeout: how long the last attempt waits before the result is `.pending`.
    ///   - queue: where `completion` runs; nil for the replica's `callbackQueue`.
    ///   - function: computes the operation from the current value; it may run several times, on any thread.
    ///   - completion: called once with the result or a `WeftError`.
    public func runTransaction(
        at time: WeftTime = .now, waitingFor target: WriteStatus? = nil,
        timeout: Duration = .seconds(WeftLimits.transactionWaitSecondsDefault), queue: DispatchQueue? = nil,
        _ function: @escaping @Sendable (Value) -> TransactionOperation,
        then completion: @escaping @Sendable (Result<TransactionResult, WeftError>) -> Void
    ) {
        let node = self
        Completion.run(queue: queue ?? access.state.callbackQueue, completion: completion) {
            try await node.runTransaction(at: time, waitingFor: target, timeout: timeout, function)
        }
    }

    // MARK: - Registered functions

    /// Calls a registered deterministic function on the node: the op carries the function's name and
    /// arguments, and every replica runs the function at the op's place in stamp order, so invariants the
    /// function keeps (no balance below zero) hold in the converged state.
    ///
    /// ```swift
    /// try replica.register(name: "withdraw", version: 1) { balance, amount in
    ///     guard case .int(let cents) = balance, case .int(let take) = amount, cents >= take else { return nil }
    ///     return .int(cents - take)
    /// }
    /// try await account.call("withdraw", arguments: 500)
    /// ```
    /// - Parameters:
    ///   - name: the registered name.
    ///   - version: the registered version (default 1).
    ///   - arguments: the function's arguments, encoded with the replica's `jsonEncoder`.
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Returns: the write's receipt.
    /// - Throws: `WeftError` with code `unknownFunction` when this replica has not registered the function,
    ///   `rejected` when the function refused the call, and the encoding errors of
    ///   ``set(_:at:waitingFor:)``.
    @discardableResult
    nonisolated(nonsending) public func call(
        _ name: String, version: UInt32 = 1, arguments: some Encodable, at time: WeftTime = .now,
        waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try target.checkIsTarget()
        let encodedArguments = try access.state.coding.encode(arguments, at: .root)
        return try await finish(
            try submitCall(name, version: version, arguments: encodedArguments, at: time), waitingFor: target)
    }

    /// Calls a registered function that takes no arguments (it receives null).
    ///
    /// ```swift
    /// try await cart.call("empty")
    /// ```
    /// - Parameters:
    ///   - name: the registered name.
    ///   - version: the registered version (default 1).
    ///   - time: when the write happens.
    ///   - target: the status to wait for (default `.durable`).
    /// - Returns: the write's receipt.
    /// - Throws: as ``call(_:version:arguments:at:waitingFor:)``.
    @discardableResult
    public func call(
        _ name: String, version: UInt32 = 1, at time: WeftTime = .now, waitingFor target: WriteStatus = .durable
    ) async throws -> WriteReceipt {
        try target.checkIsTarget()
        return try await finish(try submitCall(name, version: version, arguments: .null, at: time), waitingFor: target)
    }

    func submitCall(_ name: String, version: UInt32, arguments: Value, at time: WeftTime) throws
        -> Submitted<WriteReceipt>
    {
        try ReplicaAccess.checkFunctionName(name)
        guard access.isRegistered(name: name, version: version) else {
            throw WeftError(
                .unknownFunction,
                "no function \"\(name)\" version \(version) is registered on this replica; register it with "
                    + "replica.register(name:version:_:) first", path: path)
        }
        let call = FunctionCall(name: name, version: version, arguments: arguments)
        let receipt = try access.submit(path: location, kind: .call(call), at: time)
        return Submitted(receipt: receipt, output: receipt)
    }
}
