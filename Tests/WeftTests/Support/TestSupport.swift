import Testing
import Foundation
import WeftCore

@_spi(Engine) @testable import Weft

/// Collects values from callbacks on any thread.
final class Collector<Element: Sendable>: @unchecked Sendable {
    // Sendable: `items` is guarded by `lock`.
    private let lock = NSLock()
    private var items: [Element] = []

    func append(_ item: Element) { lock.withLock { items.append(item) } }

    var values: [Element] { lock.withLock { items } }

    var count: Int { lock.withLock { items.count } }

    /// Waits until at least `count` values arrived (or the timeout passed) and returns them.
    @discardableResult
    func wait(for count: Int, timeoutSeconds: Double = 30) async -> [Element] {
        await eventually(timeoutSeconds: timeoutSeconds) { self.count >= count }
        return values
    }
}

/// Polls `condition` until it holds or the timeout passes; returns whether it held.
///
/// It gives up only after polling at least ``minimumPolls`` times as well: when parallel tests keep
/// the cooperative threads busy past the deadline, the task the condition waits for may still be
/// queued when this poller wakes, and it gets a few more turns instead of a false failure.
@discardableResult
func eventually(timeoutSeconds: Double = 5, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    var polls = 0
    while Date() < deadline || polls < minimumPolls {
        if condition() { return true }
        polls += 1
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

/// How many times ``eventually(timeoutSeconds:_:)`` polls before it may give up.
let minimumPolls = 200

/// Waits for every block already queued on `queue` to run.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}

/// Waits until the backend delivered its notifications and the callback queue ran what they scheduled.
func settle(_ backend: MemoryBackend, rounds: Int = 3) async {
    for _ in 0..<rounds {
        try? await Task.sleep(nanoseconds: 5_000_000)
        await drain(backend.api.callbackQueue)
    }
}

/// A `WeftError`'s code from a thrown error, nil for other errors.
func code(of error: any Error) -> WeftError.Code? { (error as? WeftError)?.code }

/// Runs `body` and returns the code of the `WeftError` it throws (nil when it does not throw).
func weftErrorCode(_ body: () async throws -> Void) async -> WeftError.Code? {
    do {
        try await body()
        return nil
    } catch {
        return code(of: error)
    }
}

struct User: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

struct Message: Codable, Equatable, Sendable {
    var author: String
    var text: String
}

extension DataNode {
    /// The node at a relative path; fails the test when the path is ill-formed.
    func at(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> DataNode {
        try #require(relativeNode(for: path), sourceLocation: sourceLocation)
    }
}

extension MemoryBackend {
    /// The node at a path from the root; fails the test when the path is ill-formed.
    func node(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> DataNode {
        try root.at(path, sourceLocation: sourceLocation)
    }
}
