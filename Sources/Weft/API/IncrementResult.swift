import WeftCore

/// What an increment gives back: the node's number just after it applied locally, and the receipt that
/// follows the write to `.stable` (or to a rejection, when the node holds something other than a number).
///
/// ```swift
/// let added = try await likes.increment(by: 1)
/// print(added.value)                            // the count just after this increment, here
/// try await added.receipt.wait(for: .stable)    // every member of the group has it
/// ```
public struct IncrementResult: Sendable {
    /// The node's number just after the increment applied locally. Other writes (local or merged) may
    /// change it afterwards: subscribe to follow it.
    public let value: Number
    /// The increment's write receipt.
    public let receipt: WriteReceipt

    init(value: Number, receipt: WriteReceipt) {
        self.value = value
        self.receipt = receipt
    }
}
