@_spi(Engine) @testable import Weft
@testable import WeftCore

/// Random traffic for replica-level property tests, from two ``Workload``s over a small path space: the
/// replica's own writes, and the ops of remote writers.
struct ReplicaTraffic {
    private var local: Workload
    private var remote: Workload

    init(
        localSeed: UInt64, localWriters: Int = 1, remoteSeed: UInt64, remoteWriters: Int, items: Int, counters: Int,
        startMillis: UInt64
    ) {
        var shape = Workload.Shape()
        shape.items = items
        shape.counters = counters
        local = Workload(seed: localSeed, replicas: localWriters, shape: shape, startMillis: startMillis)
        remote = Workload(seed: remoteSeed, replicas: remoteWriters, shape: shape, startMillis: startMillis)
    }

    /// Submits the next write of local `writer` to `replica`. The workload's transactions are skipped:
    /// their read vectors name the workload's writers, so they are not ours to make.
    mutating func write(to replica: Replica, as writer: Int = 0) throws {
        let op = local.next(from: writer)
        if case .transaction = op.kind { return }
        try replica.submit(path: op.path, kind: op.kind)
    }

    /// The next `count` ops of remote `writer`, in its sequence order.
    mutating func remoteOps(from writer: Int, count: Int) -> [Op] {
        (0..<count).map { _ in remote.next(from: writer) }
    }

    /// Moves `clock` past every remote op made so far, so that none is refused as stamped too far ahead.
    func keepAhead(_ clock: TestClock) {
        clock.now = max(clock.now, remote.wallMillis + 100)
    }
}
