import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@testable import WeftNet

/// A wait in a test ran out of time.
struct TestTimeout: Error, CustomStringConvertible {
    let what: String
    let milliseconds: Int
    var description: String { "timed out after \(milliseconds) ms waiting for \(what)" }
}

/// One value handed from the loop thread to an awaiting test; the first `fulfill` wins.
final class Completion<Value: Sendable>: @unchecked Sendable {
    private let lock = _Lock()
    private var value: Value?
    private var waiter: CheckedContinuation<Value, any Error>?

    /// Delivers the value; later calls are ignored.
    func fulfill(_ newValue: Value) {
        let waiter: CheckedContinuation<Value, any Error>? = lock.withLock {
            guard value == nil else { return nil }
            value = newValue
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: newValue)
    }

    /// Whether a value was delivered.
    var isFulfilled: Bool { lock.withLock { value != nil } }

    /// Waits for the value, at most `milliseconds`. One waiter at a time.
    func value(within milliseconds: Int = 5_000, _ what: String = "a completion") async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Value? = lock.withLock {
                if let value { return value }
                waiter = continuation
                return nil
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(milliseconds))
                self?.expire(TestTimeout(what: what, milliseconds: milliseconds))
            }
        }
    }

    private func expire(_ timeout: TestTimeout) {
        let waiter: CheckedContinuation<Value, any Error>? = lock.withLock {
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(throwing: timeout)
    }
}

/// Values recorded on the loop thread and read by the test.
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = _Lock()
    private var stored: [Value] = []

    func append(_ value: Value) { lock.withLock { stored.append(value) } }
    var values: [Value] { lock.withLock { stored } }
    var count: Int { lock.withLock { stored.count } }
}

/// The bytes a connection read, in order, recorded on the loop thread and read by the test.
final class ByteRecorder: @unchecked Sendable {
    private let lock = _Lock()
    private var stored: [UInt8] = []
    private var reads = 0

    func append(_ bytes: UnsafeRawBufferPointer) {
        lock.withLock {
            stored.append(contentsOf: bytes)
            reads += 1
        }
    }

    var bytes: [UInt8] { lock.withLock { stored } }
    var count: Int { lock.withLock { stored.count } }
    /// How many chunks were read.
    var readCount: Int { lock.withLock { reads } }
}

/// How many times `eventually` polls before it may give up, however late it wakes: when parallel tests
/// keep the cooperative threads busy past the deadline, the task the condition waits for may still be
/// queued, and it gets a few more turns instead of a false failure.
let minimumPolls = 40

/// Polls `condition` every few milliseconds until it holds; throws ``TestTimeout`` after `milliseconds`.
func eventually(
    within milliseconds: Int = 5_000, _ what: String = "a condition", _ condition: @Sendable () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(milliseconds))
    var polls = 0
    while !condition() {
        guard clock.now < deadline || polls < minimumPolls else {
            throw TestTimeout(what: what, milliseconds: milliseconds)
        }
        polls += 1
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Polls `condition` on the loop thread until it holds; throws ``TestTimeout`` after `milliseconds`.
func eventually(
    on loop: EventLoop, within milliseconds: Int = 5_000, _ what: String = "a condition",
    _ condition: @escaping @Sendable () -> Bool
) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(milliseconds))
    var polls = 0
    while !(try await loop.submit(condition)) {
        guard clock.now < deadline || polls < minimumPolls else {
            throw TestTimeout(what: what, milliseconds: milliseconds)
        }
        polls += 1
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Runs `body` with a fresh event loop and always shuts it down afterwards.
func withLoop(_ body: (EventLoop) async throws -> Void) async throws {
    let loop = try EventLoop(label: "weft.net.test")
    do {
        try await body(loop)
    } catch {
        loop.shutdown()
        throw error
    }
    loop.shutdown()
}

/// Starts an echo server on an ephemeral port of 127.0.0.1 and returns its port.
///
/// It passes backpressure on: when its write buffer is full it stops reading until the buffer drains.
func startEchoServer(on loop: EventLoop, closes: Recorder<NetError?>? = nil) async throws -> Int {
    try await loop.submit {
        try loop.listen(host: "127.0.0.1", port: 0) { connection in
            connection.onRead = { [unowned connection] bytes in
                do {
                    try connection.write(bytes)
                } catch {
                    Issue.record("echo write failed: \(error)")
                }
                if !connection.isWritable { connection.pauseReading() }
            }
            connection.onWritabilityChanged = { [unowned connection] writable in
                if writable { connection.resumeReading() }
            }
            connection.onClose = { closes?.append($0) }
        }.port
    }
}

/// Writes numbered chunks to a connection as fast as it stays writable, resuming when it is writable again.
/// Loop thread only.
final class WritePump: @unchecked Sendable {
    let connection: Connection
    let writesMax: Int
    let writeBytes: (Int) -> Int
    private(set) var sent = 0
    /// Every writability change seen, in order.
    private(set) var changes: [Bool] = []
    private(set) var failure: NetError?

    /// - Parameters:
    ///   - connection: where to write.
    ///   - writesMax: how many writes to make in all.
    ///   - writeBytes: the size of write number n.
    init(connection: Connection, writesMax: Int, writeBytes: @escaping (Int) -> Int) {
        self.connection = connection
        self.writesMax = writesMax
        self.writeBytes = writeBytes
    }

    /// Every byte the pump writes, in order.
    var expectedBytes: [UInt8] { (0..<writesMax).flatMap { payload(seed: $0, count: writeBytes($0)) } }

    /// Starts pumping; the pump keeps itself alive through the connection's callback.
    func start() {
        connection.onWritabilityChanged = { [self] writable in
            changes.append(writable)
            if writable { pump() }
        }
        pump()
    }

    private func pump() {
        while connection.isWritable, sent < writesMax, failure == nil {
            do {
                try connection.write(payload(seed: sent, count: writeBytes(sent)))
                sent += 1
            } catch {
                failure = error
            }
        }
    }
}

/// Connects to 127.0.0.1:`port` and returns the open connection (set up with `configure` before it reads).
func connect(
    on loop: EventLoop, port: Int, host: String = "127.0.0.1",
    _ configure: @escaping @Sendable (Connection) -> Void = { _ in }
) async throws -> Connection {
    let outcome = Completion<Result<Connection, NetError>>()
    try await loop.submit {
        try loop.connect(host: host, port: port) { result in
            if case let .success(connection) = result { configure(connection) }
            outcome.fulfill(result)
        }
    }
    return try await outcome.value(within: 5_000, "connect to \(host):\(port)").get()
}

/// Deterministic payloads: `count` bytes that depend on `seed`.
///
/// Slices of one pattern made once, so large writes cost a copy rather than a loop per byte.
func payload(seed: Int, count: Int) -> [UInt8] {
    precondition(count <= NetLimits.writeBytesMax, "payload larger than any write")
    let offset = (seed &* 7919) & 0xFFFF
    return Array(_payloadPattern[offset..<offset + count])
}

/// Bytes with no short period, long enough for every payload offset plus the largest write.
private let _payloadPattern: [UInt8] = {
    let count = NetLimits.writeBytesMax + 0x10000
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        var state: UInt32 = 0x9E37_79B9
        for index in 0..<count {
            state = state &* 1_664_525 &+ 1_013_904_223
            buffer[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        initialized = count
    }
}()

/// A loopback TCP port held by a socket that is bound but not listening, so that connections to it are
/// refused (a probe listener closed at once would free the port for any other socket of a parallel test).
final class ReservedPort: @unchecked Sendable {
    private var descriptor: Int32
    let port: Int

    init() throws {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0, "socket(): errno \(errno)")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        if !bound { close(descriptor) }
        try #require(bound, "bind() to 127.0.0.1:0: errno \(errno)")
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Frees the port for the listener that takes it next.
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
