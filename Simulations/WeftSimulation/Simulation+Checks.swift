import WeftCore
import WeftSync

// MARK: - Checks

// Continuous checks run every `checkIntervalTicks`: same ops ⇒ same digest, stable frontiers that
// every member really holds, duplicate delivery changing nothing, and from time to time a full
// comparison with the reference fold. After healing the same event tests convergence, and once the
// replicas agree the final checks run on the common state.
extension Simulation {
    func check() {
        checksDone += 1
        let up = replicas.filter(\.isUp)
        for replica in up { coverage.bump(.opsCompacted, by: replica.compactToStableFrontier()) }
        // The share leaf's state is of its share, folded from cuts of the ops: it is left out of the
        // checks that compare whole states (it is checked against its hub at the end).
        let whole = up.filter { $0.index != leafIndex }
        checkDigests(of: whole)
        checkStableFrontiers(of: up)
        checkStableStamps(of: up)
        if checksDone % 4 == 0, !whole.isEmpty {
            checkDuplicateDelivery(at: whole[checksDone / 4 % whole.count])
        }
        let checksInFaultPhase = max(1, Int(scenario.ticksFault / SimulationLimits.checkIntervalTicks))
        let spacing = max(1, checksInFaultPhase / SimulationLimits.foldChecksPerRunMax)
        if healTick == nil, checksDone % spacing == 0, foldChecksDone < SimulationLimits.foldChecksPerRunMax,
            !whole.isEmpty
        {
            let replica = whole[foldChecksDone % whole.count]
            foldChecksDone += 1
            coverage.bump(.foldChecks)
            record(
                checker.compareWithFold(
                    replica.index, ops: checker.knownOps(replica.index), state: replica.engine.state))
            if let violation = CounterOracle.bankViolation(in: replica.engine.state) {
                fail(.bankInvariant, replica.index, violation)
            }
        }
        if let healTick, failure == nil { testConvergence(since: healTick) }
        if failure == nil, convergenceTicks == nil {
            queue.schedule(.check, at: now + SimulationLimits.checkIntervalTicks)
        }
    }

    /// A replica's engine keeps its path index's summaries true to its log: run every
    /// ``Simulation/invariantCheckIntervalEvents`` events, on the replicas that are up, one in turn (the
    /// check reads the engine and changes nothing, so the trace is the same with it or without it).
    func checkMergeInvariants() {
        guard !replicas.isEmpty else { return }
        let replica = replicas[invariantChecksDone % replicas.count]
        invariantChecksDone += 1
        guard replica.isUp else { return }
        coverage.bump(.invariantChecks)
        do {
            try replica.engine.checkInvariants()
        } catch {
            fail(.mergeInvariantBroken, replica.index, "\(error)")
        }
    }

    /// Replicas holding the same set of ops must show the same digest. Digests are only computed for
    /// replicas that share their set with another one.
    private func checkDigests(of up: [SimulatedReplica]) {
        var groups: [UInt64: [Int]] = [:]
        for replica in up {
            let key = checker.knownHash[replica.index] ^ UInt64(checker.known[replica.index].count)
            groups[key, default: []].append(replica.index)
        }
        var shared: [(replica: Int, digest: StateDigest)] = []
        for replica in up {
            let key = checker.knownHash[replica.index] ^ UInt64(checker.known[replica.index].count)
            if groups[key]!.count > 1 { shared.append((replica.index, replica.digest)) }
        }
        guard !shared.isEmpty else { return }
        coverage.bump(.digestChecks)
        record(checker.compareDigests(shared))
    }

    /// A stable frontier claims that every member holds the ops below it.
    private func checkStableFrontiers(of up: [SimulatedReplica]) {
        for replica in up {
            let stable = replica.view.stableFrontier
            for other in replicas
            where other.index != scenario.lateJoiner?.replica && other.index != leafIndex
                && !other.durable.vector.covers(stable)
            {
                return fail(
                    .acknowledgementBeyondDurable, replica.index,
                    "stable frontier \(stable) but r\(other.index) durably holds \(other.durable.vector)")
            }
        }
    }

    /// A stable stamp frontier (the instance's, which compaction folds up to) claims that every member
    /// durably holds every op stamped at or below it. The late joiner is left out, as holder and as
    /// origin: the group's frontier runs ahead of it until the snapshot reaches it.
    private func checkStableStamps(of up: [SimulatedReplica]) {
        let joiner = scenario.lateJoiner?.replica
        // The share leaf is no member either: nothing waits for its acks, so the group's frontier may pass
        // its ops too (those its hub then refuses it stamps again when it installs the hub's share).
        let holders = replicas.filter { $0.index != joiner && $0.index != leafIndex }.map {
            (index: $0.index, durable: $0.durable.vector)
        }
        let origins = holders.map { replicas[$0.index].id }
        for replica in up {
            guard let frontier = replica.instance.stableFrontier else { continue }
            if let failure = checker.stableStamp(frontier, claimedBy: replica.index, holders: holders, origins: origins) {
                return record(failure)
            }
        }
    }

    /// Delivering ops a replica already holds must change nothing, and be reported as duplicates.
    private func checkDuplicateDelivery(at replica: SimulatedReplica) {
        let sample = checker.sampleKnown(replica.index, count: SimulationLimits.duplicateCheckOpsMax)
        guard !sample.isEmpty else { return }
        coverage.bump(.duplicateChecks)
        let before = replica.engine.state
        let report = replica.engine.apply(sample)
        let after = replica.engine.state
        guard before == after, report.duplicates + report.refused.count == sample.count, report.outcomes.isEmpty else {
            let at = ValueDifference.first(between: before, and: after)
            return fail(
                .duplicateChangedState, replica.index,
                "\(sample.count) ops delivered again: \(report.duplicates) seen as duplicates, "
                    + "\(report.outcomes.count) outcomes; at \(at.path) \(at.expected) became \(at.actual)")
        }
    }

    // MARK: - Convergence

    private func testConvergence(since healTick: UInt64) {
        if isConverged() {
            convergenceTicks = now - healTick
            finalChecks()
            return
        }
        guard now - healTick > UInt64(SimulationLimits.ticksMaxConvergence) else { return }
        fail(.notConverged, nil, "after \(now - healTick) ticks of healing: \(divergenceSummary())")
    }

    private func isConverged() -> Bool {
        guard replicas.allSatisfy({ $0.isUp && $0.unsyncedCommits.isEmpty }) else { return false }
        let vector = replicas[0].durable.vector
        guard replicas.allSatisfy({ $0.durable.vector == vector && $0.engine.versionVector == vector }) else {
            return false
        }
        let digest = replicas[0].digest
        return replicas.allSatisfy { $0.index == leafIndex || $0.digest == digest } && leafHoldsItsShare()
    }

    /// True when the share leaf holds exactly its share of the hub's state (the cut its hub's sessions
    /// make), or there is no leaf.
    func leafHoldsItsShare() -> Bool {
        guard let leafIndex, let leafShare else { return true }
        return replicas[leafIndex].engine.state
            == leafShare.restrict(replicas[Scenario.hubIndex].engine.state, at: .root)
    }

    /// Where each replica stands, for a convergence failure.
    func divergenceSummary() -> String {
        var leafNote = ""
        if let leafIndex, let leafShare, replicas[leafIndex].isUp, replicas[Scenario.hubIndex].isUp {
            let share = leafShare.restrict(replicas[Scenario.hubIndex].engine.state, at: .root)
            let held = replicas[leafIndex].engine.state
            if held != share {
                let at = ValueDifference.first(between: share, and: held)
                leafNote =
                    "; leaf r\(leafIndex) differs from its share of the hub at \(at.path): "
                    + "hub has \(at.expected), leaf has \(at.actual)"
            }
        }
        return replicas.map { replica in
            let sessions = replica.endpoints.compactMap { connections[$0.connection]?.sessions[$0.side]?.phase }
            let connected = sessions.filter { $0 == .connected }.count
            return "r\(replica.index) \(replica.isUp ? "up" : "down") holds \(replica.durable.vector.total) durable, "
                + "\(replica.unsyncedOpCount) unsynced, digest \(replica.isUp ? replica.engine.digest.description : "-"), "
                + "\(connected)/\(sessions.count) sessions connected"
        }.joined(separator: "; ") + leafNote
    }

    /// On the converged state: it is the fold of every op made (none lost that was synced or
    /// acknowledged), counters are exact, the bank holds.
    private func finalChecks() {
        let reference = replicas[0]
        let table = checker.ops
        for replica in replicas where checker.known[replica.index] != checker.known[0] {
            return fail(.conflictingOps, replica.index, "converged vectors but different op sets from r0")
        }
        if let leafIndex {
            // Checked again here so that the figure counts it; convergence waited for it.
            coverage.bump(.leafShareChecks)
            guard leafHoldsItsShare() else { return fail(.shareLeaked, leafIndex, "the leaf's state is not its share") }
        }
        guard checker.known[0].count == table.count else {
            return fail(
                .durableOpLost, nil,
                "\(table.count - checker.known[0].count) ops made (and not lost unsynced) are missing at the end")
        }
        let vector = reference.durable.vector
        guard vector.covers(checker.acknowledged) else {
            return fail(
                .durableOpLost, nil, "ops acknowledged up to \(checker.acknowledged) but the end holds \(vector)")
        }
        let sorted = table.values.sorted { $0.stamp < $1.stamp }
        let fold = ReferenceFold.fold(sorted, registry: Workload.registry)
        coverage.bump(.foldChecks)
        let state = reference.engine.state
        if fold.state != state {
            let at = ValueDifference.first(between: fold.state, and: state)
            return fail(
                .stateDiffersFromFold, 0,
                "converged state differs from the fold of \(sorted.count) ops at \(at.path): "
                    + "fold has \(at.expected), replicas have \(at.actual)")
        }
        let expected = CounterOracle.expected(
            sortedOps: sorted, foldOutcomes: fold.outcomes, registry: Workload.registry)
        for root in CounterOracle.roots where expected[root] != state[root] {
            let at = ValueDifference.first(between: expected[root], and: state[root])
            return fail(
                .counterInexact, 0, "/\(root)\(at.path): increments sum to \(at.expected), replicas have \(at.actual)")
        }
        if let violation = CounterOracle.bankViolation(in: state) { return fail(.bankInvariant, 0, violation) }
        if scenario.relationShare != nil {
            coverage.bump(.relationChecks)
            if let violation = RelationWorkload.violation(in: state) {
                return fail(.relationIntegrity, 0, violation)
            }
        }
        finalDigest = reference.engine.digest.rawValue
        trace.add(finalDigest ?? 0)
    }
}
