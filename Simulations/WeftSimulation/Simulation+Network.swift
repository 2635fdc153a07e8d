import WeftCore
import WeftSync

/// A pair of replicas that keep a connection between them: the initiator dials, the acceptor answers.
struct Link {
    let initiator: Int
    let acceptor: Int
    /// Base one-way latency, in ticks.
    let latency: UInt64
    /// The initiator's current connection.
    var connection: Int?
    var failedAttempts = 0
    var dialScheduled = false
}

/// One transport connection of a link: a session on each side (nil once that side closed), the
/// generations of their timers, and the last arrival tick in each direction (a stream keeps order).
struct Connection {
    static let initiatorSide = 0
    static let acceptorSide = 1

    let id: Int
    let link: Int
    /// The replica on each side.
    let replicas: [Int]
    var sessions: [SyncSession?]
    var timerGenerations: [UInt64] = [0, 0, 0, 0]
    /// Last arrival tick toward each side.
    var lastArrival: [UInt64] = [0, 0]
    var damaged = false
    /// True once each side's session reported itself connected.
    var ready = [false, false]
    /// When the session first reported itself connected.
    var readyTick: UInt64?
    /// True once a side's transport was reset: bytes still in flight toward it are discarded.
    var torn = [false, false]

    static func timerSlot(side: Int, timer: SyncTimer) -> Int { side * 2 + (timer == .keepAlive ? 0 : 1) }
}

// MARK: - Connections

extension Simulation {
    func scheduleDial(_ link: Int, at tick: UInt64) {
        links[link].dialScheduled = true
        queue.schedule(.dial(link: link), at: tick)
    }

    /// Dials again after a jittered exponential backoff.
    func scheduleRedial(_ link: Int, extra: UInt64 = 0) {
        guard !links[link].dialScheduled else { return }
        let attempts = min(links[link].failedAttempts, 16)
        let delay = min(SimulationLimits.redialTicksMax, SimulationLimits.redialTicksMin << UInt64(attempts))
        let jittered = delay / 2 + network.draw(below: delay / 2 + 1)
        scheduleDial(link, at: now + extra + jittered)
    }

    func dial(_ index: Int) {
        links[index].dialScheduled = false
        let link = links[index]
        guard replicas[link.initiator].isUp, link.connection == nil else { return }
        guard replicas[link.acceptor].isUp, network.reachable(link.initiator, link.acceptor, at: now) else {
            coverage.bump(.dialsFailed)
            links[index].failedAttempts += 1
            scheduleRedial(index, extra: SimulationLimits.connectTimeoutTicks)
            return
        }
        let id = connections.count
        let sides = [link.initiator, link.acceptor]
        var sessions: [SyncSession?] = []
        for replica in sides {
            // A schedule file comes from outside: settings the session refuses end the run with a failure.
            do {
                sessions.append(try SyncSession(configuration: configurations[replica]))
            } catch {
                fail(.localFailure, replica, "the scenario's session settings are refused: \(error)")
                return
            }
        }
        connections.append(Connection(id: id, link: index, replicas: sides, sessions: sessions))
        links[index].connection = id
        for side in [Connection.acceptorSide, Connection.initiatorSide] {
            let address = EndpointAddress(connection: id, side: side)
            replicas[sides[side]].endpoints.append(address)
            let nonce = AuthNonce.random(using: &nonces)
            let role: SyncSide = side == Connection.initiatorSide ? .initiator : .acceptor
            withSession(address) { session, view, now in session.onStart(role, nonce: nonce, source: view, now: now) }
        }
    }

    /// Runs `body` on the session at `address` (taken out of the connection while it runs, so its
    /// buffers are never copied), then performs the actions it returned.
    func withSession(
        _ address: EndpointAddress, _ body: (inout SyncSession, ReplicaLogView, UInt64) -> [SyncAction]
    ) {
        guard failure == nil, connections[address.connection] != nil,
            var session = connections[address.connection]!.sessions[address.side].take()
        else { return }
        let replica = replicas[connections[address.connection]!.replicas[address.side]]
        let actions = body(&session, replica.view, now)
        connections[address.connection]!.sessions[address.side] = consume session
        perform(actions, at: address)
    }

    func isOpen(_ address: EndpointAddress) -> Bool {
        connections[address.connection]?.sessions[address.side] != nil
    }

    // MARK: - Bytes

    /// Sends bytes from one side: each frame may be dropped, duplicated or reordered (which damages
    /// the stream: it is reset soon after), delayed, or held by a partition or clog.
    func transmit(_ bytes: [UInt8], from address: EndpointAddress) {
        guard let connection = connections[address.connection], connection.sessions[address.side] != nil else { return }
        coverage.bump(.bytesSent, by: bytes.count)
        trace.add(bytes: bytes)
        guard network.faultsActive, network.profile.damagesStreams else {
            coverage.bump(.framesSent)
            schedule(bytes[...], toward: address.side ^ 1, of: address.connection, reordered: false)
            return
        }
        for frame in NetworkModel.frames(in: bytes) {
            coverage.bump(.framesSent)
            switch network.fate() {
            case .delivered: schedule(frame, toward: address.side ^ 1, of: address.connection, reordered: false)
            case .dropped:
                coverage.bump(.framesDropped)
                damage(address.connection)
            case .duplicated:
                coverage.bump(.framesDuplicated)
                schedule(frame, toward: address.side ^ 1, of: address.connection, reordered: false)
                schedule(frame, toward: address.side ^ 1, of: address.connection, reordered: false)
                damage(address.connection)
            case .reordered:
                coverage.bump(.framesReordered)
                schedule(frame, toward: address.side ^ 1, of: address.connection, reordered: true)
                damage(address.connection)
            }
        }
    }

    /// Schedules the arrival of bytes at `side`, after those already on their way (unless reordered:
    /// then after a few more ticks, letting the next frames overtake).
    private func schedule(_ bytes: ArraySlice<UInt8>, toward side: Int, of id: Int, reordered: Bool) {
        guard let connection = connections[id] else { return }
        let link = links[connection.link]
        let (arrival, spiked, held) = network.arrival(
            from: connection.replicas[side ^ 1], to: connection.replicas[side], tick: now, latency: link.latency)
        if spiked { coverage.bump(.framesDelayed) }
        if held { coverage.bump(.framesHeldByFaults) }
        var tick = max(arrival, connection.lastArrival[side])
        if reordered {
            tick += 1 + network.draw(below: 20)
        } else {
            connections[id]!.lastArrival[side] = tick
        }
        if let chunks = network.chunks(of: bytes) {
            coverage.bump(.deliveriesChunked)
            for chunk in chunks { queue.schedule(.deliver(connection: id, side: side, bytes: Array(chunk)), at: tick) }
        } else {
            queue.schedule(.deliver(connection: id, side: side, bytes: Array(bytes)), at: tick)
        }
    }

    /// Schedules the end of the stream toward `side` (a FIN or a reset), after the bytes on their way.
    func scheduleTransportClosed(toward side: Int, of id: Int) {
        guard let connection = connections[id] else { return }
        let link = links[connection.link]
        let (arrival, _, _) = network.arrival(
            from: connection.replicas[side ^ 1], to: connection.replicas[side], tick: now, latency: link.latency)
        let tick = max(arrival, connection.lastArrival[side])
        connections[id]!.lastArrival[side] = tick
        queue.schedule(.transportClosed(connection: id, side: side), at: tick)
    }

    private func damage(_ id: Int) {
        guard let connection = connections[id], !connection.damaged else { return }
        connections[id]!.damaged = true
        queue.schedule(.reset(connection: id), at: now + SimulationLimits.damageResetTicks)
    }

    func deliver(_ bytes: [UInt8], to address: EndpointAddress) {
        guard let connection = connections[address.connection], !connection.torn[address.side] else { return }
        trace.add(bytes: bytes)
        guard connection.sessions[address.side] != nil else {
            // A closed socket on a running host answers with a reset, once.
            let peer = address.side ^ 1
            if replicas[connection.replicas[address.side]].isUp, connection.sessions[peer] != nil {
                connections[address.connection]!.torn[address.side] = true
                scheduleTransportClosed(toward: peer, of: address.connection)
            }
            return
        }
        withSession(address) { session, view, now in session.onBytesReceived(bytes, source: view, now: now) }
    }

    func transportClosed(_ address: EndpointAddress) {
        withSession(address) { session, _, now in session.onTransportClosed(now: now) }
    }

    /// Tears a damaged connection down: both sides see the transport close, bytes in flight are lost.
    func reset(_ id: Int) {
        guard connections[id] != nil else { return }
        coverage.bump(.connectionsResetAfterDamage)
        connections[id]!.torn = [true, true]
        for side in [Connection.initiatorSide, Connection.acceptorSide] {
            transportClosed(EndpointAddress(connection: id, side: side))
        }
    }

    func timerFired(_ timer: SyncTimer, generation: UInt64, at address: EndpointAddress) {
        let slot = Connection.timerSlot(side: address.side, timer: timer)
        guard let connection = connections[address.connection], connection.timerGenerations[slot] == generation else {
            return
        }
        withSession(address) { session, view, now in session.onTimerFired(timer, source: view, now: now) }
    }

    /// Forgets one side of a connection: its timers stop, its replica no longer lists it, and the
    /// link of an initiator dials again.
    func forget(_ address: EndpointAddress) {
        guard let connection = connections[address.connection], connection.sessions[address.side] != nil else { return }
        connections[address.connection]!.sessions[address.side] = nil
        for timer in SyncTimer.allCases {
            connections[address.connection]!.timerGenerations[Connection.timerSlot(side: address.side, timer: timer)] +=
                1
        }
        let replica = replicas[connection.replicas[address.side]]
        replica.endpoints.removeAll { $0 == address }
        if address.side == Connection.initiatorSide, links[connection.link].connection == address.connection {
            links[connection.link].connection = nil
            // A session that lived a while resets the backoff; one that failed early (a refused
            // handshake, a clock-drift refusal) makes the next dial wait longer.
            let lived = connection.readyTick.map { now - $0 >= scenario.sessions.idleTimeoutTicks } ?? false
            links[connection.link].failedAttempts = lived ? 0 : links[connection.link].failedAttempts + 1
            if replica.isUp { scheduleRedial(connection.link) }
        }
        if connections[address.connection]!.sessions.allSatisfy({ $0 == nil }) {
            connections[address.connection] = nil
        }
    }
}
