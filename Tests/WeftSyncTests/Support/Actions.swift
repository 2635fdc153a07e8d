import Testing
import WeftCore
@testable import WeftSync

extension Array where Element == SyncAction {
    /// The bytes of every send action, in order.
    var bytesSent: [UInt8] {
        flatMap { action -> [UInt8] in
            if case .send(let bytes) = action { return bytes }
            return []
        }
    }

    /// The messages of every send action, decoded.
    var messagesSent: [Message] { (try? decodeAll(bytesSent)) ?? [] }

    /// The error of the close action; `.some(nil)` for a clean close, nil when there is none.
    var closeReason: SyncError?? {
        for action in self {
            if case .close(let error) = action { return .some(error) }
        }
        return nil
    }

    /// The error frame sent, if any.
    var errorSent: SyncError? {
        for message in messagesSent {
            if case .error(let error) = message { return error }
        }
        return nil
    }

    var opsToApply: [Op] {
        flatMap { action -> [Op] in
            if case .applyOps(let ops, _) = action { return ops.ops }
            return []
        }
    }

    func scheduled(_ timer: SyncTimer) -> UInt64? {
        for case .scheduleTimer(timer, let delay) in self { return delay }
        return nil
    }

    func cancels(_ timer: SyncTimer) -> Bool { contains(.cancelTimer(timer)) }
}

/// A session started on one side, for driving by hand.
func startedSession(
    node: Int, side: SyncSide, role: SyncRole = .peer, harness: Harness = Harness(nodeCount: 4),
    source: some OpSource = EmptyOpSource(), now: UInt64 = 1000, adjust: (inout SyncConfiguration) -> Void = { _ in }
) -> (SyncSession, [SyncAction]) {
    var configuration = harness.configuration(node: node, role: role)
    adjust(&configuration)
    var session = try! SyncSession(configuration: configuration)
    var generator = SeededGenerator(seed: UInt64(node) + 100)
    let actions = session.onStart(side, nonce: .random(using: &generator), source: source, now: now)
    return (session, actions)
}

/// A hello from `node` as another replica would send it.
func hello(from node: Int, role: SyncRole = .peer, version: UInt16 = SyncLimits.protocolVersion) -> Hello {
    var generator = SeededGenerator(seed: UInt64(node) + 500)
    return Hello(
        protocolVersion: version, replica: Harness.replica(node), role: role, name: "",
        nonce: .random(using: &generator), versionVector: VersionVector())
}

/// Two sessions (node 0 initiates, node 1 accepts) taken through the handshake by hand; the
/// actions of the last steps are returned for inspection.
struct ConnectedPair {
    var initiator: SyncSession
    var acceptor: SyncSession
    var initiatorLog: MemoryOpLog
    var acceptorLog: MemoryOpLog
    var now: UInt64 = 1000

    init(
        initiatorLog: MemoryOpLog = MemoryOpLog(replica: Harness.replica(0)),
        acceptorLog: MemoryOpLog = MemoryOpLog(replica: Harness.replica(1)),
        adjust: (inout SyncConfiguration, SyncSide) -> Void = { _, _ in }
    ) {
        self.initiatorLog = initiatorLog
        self.acceptorLog = acceptorLog
        let harness = Harness(nodeCount: 2)
        var initiatorConfiguration = harness.configuration(node: 0)
        adjust(&initiatorConfiguration, .initiator)
        var acceptorConfiguration = harness.configuration(node: 1)
        adjust(&acceptorConfiguration, .acceptor)
        initiator = try! SyncSession(configuration: initiatorConfiguration)
        acceptor = try! SyncSession(configuration: acceptorConfiguration)
    }

    /// Runs the handshake; returns the initiator's and acceptor's actions after it (which carry
    /// the first ops each side sends).
    mutating func handshake() -> (initiator: [SyncAction], acceptor: [SyncAction]) {
        var generator = SeededGenerator(seed: 3)
        _ = acceptor.onStart(.acceptor, nonce: .random(using: &generator), source: acceptorLog, now: now)
        let hello = initiator.onStart(.initiator, nonce: .random(using: &generator), source: initiatorLog, now: now)
        let challenge = acceptor.onBytesReceived(hello.bytesSent, source: acceptorLog, now: now)
        let response = initiator.onBytesReceived(challenge.bytesSent, source: initiatorLog, now: now)
        let welcome = acceptor.onBytesReceived(response.bytesSent, source: acceptorLog, now: now)
        let ready = initiator.onBytesReceived(welcome.bytesSent, source: initiatorLog, now: now)
        return (ready, welcome)
    }
}
