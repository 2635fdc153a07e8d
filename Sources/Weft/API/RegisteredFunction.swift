import WeftCore

/// A deterministic function that `call` ops name, registered with ``Replica/register(name:version:_:)``:
/// `(current, arguments) -> new value`, or nil to refuse.
///
/// - `current` is the value of the node the call is made on (`.null` when the node is absent), as it
///   stands at the call's place in stamp order; `arguments` is what `node.call(_:version:arguments:)` passed, decoded from JSON (`.null` for none).
/// - Return the node's new value (`.null` deletes the node). Return **nil to refuse the call**: nothing
///   is written, the op is rejected (`rejected(.refusedByFunction(name:))` on its receipt, `WeftError(.rejected)`
///   to the caller that awaits it), and it stays rejected on every replica.
/// - Every replica runs it again at the op's place whenever an earlier op arrives late, so it must be
///   pure: the same inputs give the same output on every replica and every run (no clock, no random
///   numbers, no reads of other nodes). That is what lets an invariant hold in the converged state.
///
/// ```swift
/// let withdraw: RegisteredFunction = { balance, amount in
///     guard let cents = balance.intValue, let take = amount.intValue, cents >= take else { return nil }
///     return .int(cents - take)
/// }
/// try replica.register(name: "withdraw", version: 1, withdraw)
/// try await account.call("withdraw", arguments: 500)
/// ```
public typealias RegisteredFunction = FunctionRegistry.Function
