import Testing
import WeftCore
@testable import WeftSync

/// The merge engine as a session's op source (an engine that never compacts).
struct EngineSource: OpSource {
    let engine: MergeEngine

    var versionVector: VersionVector { engine.versionVector }

    func ops(from origin: ReplicaID, after sequence: UInt64, limit: Int, bytesMax: Int) -> [Op] {
        engine.ops(from: origin, after: sequence, limit: limit)
    }
}

/// Replicas backed by merge engines, joined by sessions; bytes are delivered in random order.
struct EngineLine {
    struct Endpoint {
        let replica: Int
        var session: SyncSession
        var inbox: [UInt8] = []
    }

    let engines: [MergeEngine]
    var endpoints: [Endpoint] = []
    var generator: SeededGenerator
    var now: UInt64 = 1000

    init(replicas: [ReplicaID], links: [(Int, Int)], seed: UInt64) {
        engines = replicas.map { _ in MergeEngine(registry: Workload.registry) }
        generator = SeededGenerator(seed: seed)
        for (initiator, acceptor) in links {
            for (replica, other) in [(initiator, acceptor), (acceptor, initiator)] {
                let token = try! AuthToken(string: "engine line secret \(min(replica, other)) \(max(replica, other))")
                let book = TokenBook([replicas[other].description: token])
                let configuration = SyncConfiguration(replica: replicas[replica], role: .peer, tokens: book)
                endpoints.append(Endpoint(replica: replica, session: try! SyncSession(configuration: configuration)))
            }
            let first = endpoints.count - 2
            start(first + 1, side: .acceptor)
            start(first, side: .initiator)
        }
    }

    mutating func start(_ endpoint: Int, side: SyncSide) {
        let source = EngineSource(engine: engines[endpoints[endpoint].replica])
        let nonce = AuthNonce.random(using: &generator)
        perform(endpoints[endpoint].session.onStart(side, nonce: nonce, source: source, now: now), at: endpoint)
    }

    mutating func perform(_ actions: [SyncAction], at endpoint: Int) {
        for action in actions {
            switch action {
            case .send(let bytes): endpoints[endpoint ^ 1].inbox += bytes
            case .applyOps(let ops, _):
                engines[endpoints[endpoint].replica].apply(ops.ops)
                logGrew(replica: endpoints[endpoint].replica)
            case .close(let error): Issue.record("a session closed: \(String(describing: error))")
            default: break
            }
        }
    }

    mutating func logGrew(replica: Int) {
        let source = EngineSource(engine: engines[replica])
        for endpoint in endpoints.indices where endpoints[endpoint].replica == replica {
            perform(endpoints[endpoint].session.onLocalOpsAppended(source: source, now: now), at: endpoint)
        }
    }

    /// Delivers up to `count` random pieces of pending bytes; all of them when `count` is nil.
    mutating func deliver(_ count: Int? = nil) {
        var delivered = 0
        while count.map({ delivered < $0 }) ?? true {
            let busy = endpoints.indices.filter { !endpoints[$0].inbox.isEmpty }
            guard !busy.isEmpty else { return }
            let endpoint = busy[Int(generator.below(UInt64(busy.count)))]
            let size = min(endpoints[endpoint].inbox.count, Int(generator.below(512)) + 1)
            let chunk = Array(endpoints[endpoint].inbox.prefix(size))
            endpoints[endpoint].inbox.removeFirst(size)
            let source = EngineSource(engine: engines[endpoints[endpoint].replica])
            perform(endpoints[endpoint].session.onBytesReceived(chunk, source: source, now: now), at: endpoint)
            delivered += 1
        }
    }
}

@Suite struct SyncSessionMergeEngineTests {
    @Test(arguments: [UInt64(1), 2, 3])
    func mergeEnginesInALineConvergeToTheReferenceFold(seed: UInt64) {
        var workload = Workload(seed: seed, replicas: 3)
        var line = EngineLine(replicas: workload.replicaIDs, links: [(0, 1), (1, 2)], seed: seed)
        var all: [Op] = []
        var generator = SeededGenerator(seed: seed + 10)
        for _ in 0..<250 {
            let writer = Int(generator.below(3))
            let op = workload.next(from: writer)
            all.append(op)
            line.engines[writer].apply([op])
            line.logGrew(replica: writer)
            line.deliver(Int(generator.below(3)))
        }
        line.deliver()
        let expected = ReferenceFold.fold(all, registry: Workload.registry).state
        for engine in line.engines {
            #expect(engine.versionVector.total == 250)
            #expect(engine.digest == StateDigest(of: expected))
        }
    }
}
