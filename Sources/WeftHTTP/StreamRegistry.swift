import Foundation
import HTTPTypes
import Hummingbird
import Weft
import WeftCore
import WeftSync

/// The open event streams (`GET` with `Accept: text/event-stream`) and what wakes them.
///
/// A stream keeps no queue of events: the replica's change listener only counts the changes that touch
/// its node and wakes its writer, which reads the node's value once and sends what differs from what it
/// sent last. A burst of changes therefore becomes one event; a reader too slow to take them (its writer
/// blocked on the socket while ``HTTPLimits/streamBacklogMax`` changes arrived) gets `cancel` and is closed.
final class StreamRegistry: @unchecked Sendable {
    let replica: Replica
    let access: HTTPAccess
    let metrics: HTTPMetrics
    let keepAlive: Duration
    private let lock = NSLock()
    private var streams: [UUID: StreamState] = [:]
    private var isClosed = false
    private var listenerToken: ChangeListenerToken?

    init(replica: Replica, access: HTTPAccess, metrics: HTTPMetrics, keepAlive: Duration) {
        self.replica = replica
        self.access = access
        self.metrics = metrics
        self.keepAlive = keepAlive
        listenerToken = replica.addChangeListener { [weak self] batch in self?.noteChanges(batch) }
    }

    var openCount: Int { lock.withLock { streams.count } }

    private func noteChanges(_ batch: ChangeBatch) {
        let open = lock.withLock { Array(streams.values) }
        for stream in open where batch.changes.contains(where: { $0.path.isRelated(to: stream.path) }) {
            stream.flag { $0.changes += 1 }
        }
    }

    /// Ends every stream (the daemon stops) and stops listening to the replica.
    func closeAll() {
        let open = lock.withLock { () -> [StreamState] in
            isClosed = true
            return Array(streams.values)
        }
        for stream in open { stream.flag { $0.closed = true } }
        listenerToken?.cancel()
    }

    /// The response of a stream request: headers now, events as the node changes.
    func open(path: Path, client: HTTPClient, secret: [UInt8]) throws(HTTPFailure) -> Response {
        let state = StreamState(path: path)
        let admitted = lock.withLock { () -> Bool in
            guard !isClosed, streams.count < HTTPLimits.streamsMax else { return false }
            streams[state.id] = state
            return true
        }
        guard admitted else {
            throw HTTPFailure(status: 503, "Too many event streams: at most \(HTTPLimits.streamsMax) at once")
        }
        metrics.streamsOpened.increment()
        access.addListener(state.id) { state.flag { $0.accessChanged = true } }
        let body = ResponseBody { [self] writer in
            defer { self.finish(state) }
            try await self.run(state, client: client, secret: secret, writer: &writer)
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: body)
    }

    private func finish(_ state: StreamState) {
        access.removeListener(state.id)
        _ = lock.withLock { streams.removeValue(forKey: state.id) }
        state.finish()
    }

    private func run(
        _ state: StreamState, client: HTTPClient, secret: [UInt8], writer: inout any ResponseBodyWriter
    ) async throws {
        var last = replica.value(at: state.path)
        try await writer.write(Self.event("put", #"{"path":"/","data":\#(last.jsonString())}"#))
        let ticker = Task { [keepAlive] in
            while !Task.isCancelled {
                try? await Task.sleep(for: keepAlive)
                state.flag { $0.keepAliveDue = true }
            }
        }
        defer { ticker.cancel() }
        for await _ in state.wakes {
            let flags = state.take()
            if flags.closed { return }
            if flags.changes > HTTPLimits.streamBacklogMax {
                try await writer.write(Self.event("cancel", Value.string("the reader is too slow").jsonString()))
                return
            }
            if flags.accessChanged {
                guard let renewed = access.client(presenting: secret), renewed.name == client.name else {
                    try await writer.write(Self.event("auth_revoked", Value.string("credential is no longer valid").jsonString()))
                    return
                }
                if let denial = renewed.denial(.read, at: state.path) {
                    try await writer.write(Self.event("cancel", Value.string(denial.message).jsonString()))
                    return
                }
            }
            if flags.changes > 0 {
                let now = replica.value(at: state.path)
                if now != last {
                    try await writer.write(Self.event(for: last, now))
                    last = now
                }
            }
            if flags.keepAliveDue { try await writer.write(Self.event("keep-alive", "null")) }
        }
    }

    /// The event that turns `old` into `new` at the listened node: a `patch` of the children that
    /// changed when both are objects, else a `put` of the whole node.
    static func event(for old: Value, _ new: Value) -> ByteBuffer {
        guard case .object(let before) = old, case .object(let after) = new else {
            return event("put", #"{"path":"/","data":\#(new.jsonString())}"#)
        }
        var changed: [Key: Value] = [:]
        for (key, value) in after where before[key] != value { changed[key] = value }
        let removed = before.keys.filter { after[$0] == nil }
        var parts = changed.keys.sorted().map { Value.string($0.text).jsonString() + ":" + (changed[$0] ?? .null).jsonString() }
        parts += removed.sorted().map { Value.string($0.text).jsonString() + ":null" }
        return event("patch", #"{"path":"/","data":{\#(parts.joined(separator: ","))}}"#)
    }

    static func event(_ name: String, _ data: String) -> ByteBuffer {
        ByteBuffer(string: "event: \(name)\ndata: \(data)\n\n")
    }
}

/// What one stream's writer has to do next, set by the change listener, the keep-alive ticker, a reload
/// of the token file and the daemon's stop.
final class StreamState: @unchecked Sendable {
    struct Flags {
        var changes = 0
        var accessChanged = false
        var keepAliveDue = false
        var closed = false
    }

    let id = UUID()
    let path: Path
    let wakes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let lock = NSLock()
    private var flags = Flags()

    init(path: Path) {
        self.path = path
        // One pending wake is enough: the writer reads every flag when it wakes.
        (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func flag(_ change: (inout Flags) -> Void) {
        lock.withLock { change(&flags) }
        continuation.yield()
    }

    func take() -> Flags {
        lock.withLock {
            defer { flags = Flags() }
            return flags
        }
    }

    func finish() { continuation.finish() }
}
