import WeftCore

/// How far one op has travelled beyond its replica.
public enum AcknowledgementLevel: Sendable, Hashable, Comparable {
    /// No hub and fewer than the required number of peers acknowledged it yet.
    case unacknowledged
    /// A hub, or the required number of peers, acknowledged it.
    case acknowledged
    /// Every member has it (it is below the stable frontier), so it may be compacted.
    case stable
}

/// What each peer acknowledged, kept by a replica's owner across sessions, to tell the status of
/// local ops and the stable frontier (the ops every member has, which compaction may fold).
///
/// Feed it the ``SyncAction/recordAcknowledgement(_:from:)`` actions of every session.
///
/// ```swift
/// var book = AcknowledgementBook(local: me, members: [me, hub], hubs: [hub])
/// book.record(ack, from: hub)
/// book.level(origin: me, sequence: 12, local: log.versionVector)   // .acknowledged or .stable
/// let frontier = book.stableFrontier(local: log.versionVector)
/// ```
public struct AcknowledgementBook: Sendable, Hashable {
    /// This replica.
    public let local: ReplicaID
    /// The replicas whose acknowledgement stability waits for (this replica included).
    public private(set) var members: Set<ReplicaID>
    /// The replicas whose single acknowledgement makes an op acknowledged.
    public private(set) var hubs: Set<ReplicaID>
    /// How many peers must acknowledge an op when no hub did.
    public var peersRequired: Int
    /// The highest acknowledged version vector of each peer.
    public private(set) var acknowledged: [ReplicaID: VersionVector] = [:]
    /// The highest stable frontier each peer announced. Only a hub's counts (a hub knows every member;
    /// its leaves, and peers in a chain, may not: a leaf's frontier, made from the hub's own acks, would
    /// otherwise lead the hub to call stable what a member without ops of its own lacks).
    public private(set) var announced: [ReplicaID: VersionVector] = [:]

    /// What each peer limited to a share acknowledged (the projections it holds). It counts for the stable
    /// frontier, as a member's acks do: such a peer's new ops are stamped above every op it received, so
    /// ops stable here never sort after one of its ops still on its way. It makes nothing acknowledged: a
    /// placeholder is no copy of an op.
    public private(set) var shareAcknowledged: [ReplicaID: VersionVector] = [:]

    /// The highest compaction stamp each peer announced (nil entries are not kept).
    public private(set) var compactionAnnounced: [ReplicaID: Stamp] = [:]

    /// How far this replica may compact: no further than any of its hubs did, so that every op a hub
    /// accepts (from a replica that joined after a compaction) is above this replica's frontier too.
    /// Unlimited without hubs (a mesh: see the known limits of `Docs/PROTOCOL.md`).
    public var compactionCap: CompactionCap {
        let others = hubs.subtracting([local])
        guard !others.isEmpty else { return .unlimited }
        var cap: Stamp?
        for hub in others {
            guard let stamp = compactionAnnounced[hub] else { return .nothing }
            cap = cap.map { min($0, stamp) } ?? stamp
        }
        return cap.map(CompactionCap.upTo) ?? .nothing
    }

    /// The highest stable frontier the hubs announced.
    public var announcedStable: VersionVector {
        announced.reduce(VersionVector()) { hubs.contains($1.key) ? $0.merged(with: $1.value) : $0 }
    }

    /// A book for `local` within `members`.
    ///
    /// - Parameters:
    ///   - local: this replica (always a member).
    ///   - members: every replica of the membership.
    ///   - hubs: replicas whose acknowledgement alone makes an op acknowledged.
    ///   - peersRequired: how many peers must acknowledge otherwise (at least 1).
    public init(local: ReplicaID, members: Set<ReplicaID>, hubs: Set<ReplicaID> = [], peersRequired: Int = 1) {
        precondition(peersRequired >= 1, "at least one peer must acknowledge")
        self.local = local
        self.members = members.union([local])
        self.hubs = hubs
        self.peersRequired = peersRequired
    }

    /// Adds a member (its acknowledgements then hold the stable frontier back until it catches up).
    public mutating func addMember(_ replica: ReplicaID) { members.insert(replica) }

    /// Makes `replica` a hub: its acknowledgement alone makes an op acknowledged. A hub is a member too.
    public mutating func addHub(_ replica: ReplicaID) {
        hubs.insert(replica)
        members.insert(replica)
    }

    /// Removes a member (for example one gone past the retention horizon).
    public mutating func removeMember(_ replica: ReplicaID) {
        precondition(replica != local, "the local replica is always a member")
        members.remove(replica)
        acknowledged.removeValue(forKey: replica)
        shareAcknowledged.removeValue(forKey: replica)
        announced.removeValue(forKey: replica)
        compactionAnnounced.removeValue(forKey: replica)
    }

    /// Records an acknowledgement; vectors only grow.
    public mutating func record(_ acknowledgement: Acknowledgement, from peer: ReplicaID) {
        acknowledged[peer, default: VersionVector()] = acknowledged[peer, default: VersionVector()]
            .merged(with: acknowledgement.versionVector)
        announced[peer, default: VersionVector()] = announced[peer, default: VersionVector()]
            .merged(with: acknowledgement.stableFrontier)
        if let stamp = acknowledgement.compactionStamp {
            compactionAnnounced[peer] = max(compactionAnnounced[peer] ?? stamp, stamp)
        }
    }

    /// Records an acknowledgement of a peer limited to a share: it becomes a member, whose acks hold the
    /// stable frontier back as any member's do, and acknowledge nothing. Vectors only grow.
    public mutating func recordShare(_ acknowledgement: Acknowledgement, from peer: ReplicaID) {
        members.insert(peer)
        shareAcknowledged[peer, default: VersionVector()] = shareAcknowledged[peer, default: VersionVector()]
            .merged(with: acknowledgement.versionVector)
    }

    /// The ops every member has: the pointwise minimum of the members' acknowledged vectors and the
    /// local one, raised to any frontier a hub announced as stable; on a replica that has a hub, only
    /// what its hubs announced (and it holds). Empty while this replica knows no other member: a replica
    /// that has not met its group yet cannot tell what the group holds, and its own ops, taken as
    /// stable, would count as acknowledged, which they are not (a snapshot install could then not stamp
    /// them again, and they would never reach the group).
    public func stableFrontier(local localVector: VersionVector) -> VersionVector {
        guard members.contains(where: { $0 != local }) else { return VersionVector() }
        // A leaf takes stability from its hubs alone: it knows only the members it met or holds ops
        // of, and a member it has not heard of yet (one that joined the hub after it, or a quiet one)
        // may lack what every member it knows holds.
        let isLeaf = hubs.contains { $0 != local }
        // Origin by origin, in one pass: only origins the local log holds can be stable here.
        var result = VersionVector()
        for (origin, held) in localVector.entries {
            var lowest = isLeaf ? 0 : held
            for member in members where member != local && lowest > 0 {
                lowest = min(lowest, (acknowledged[member] ?? shareAcknowledged[member])?[origin] ?? 0)
            }
            // A hub's announcement cannot make stable what this replica does not hold yet.
            result.advance(origin: origin, to: min(max(lowest, announcedStable[origin]), held))
        }
        return result
    }

    /// The last op of `origin` that is acknowledged: held by a hub, or by at least ``peersRequired``
    /// other replicas. Zero when none is.
    ///
    /// ```swift
    /// replica.markAcknowledged(through: book.acknowledgedThrough(origin: me))
    /// ```
    public func acknowledgedThrough(origin: ReplicaID) -> UInt64 {
        var byHub: UInt64 = 0
        var byPeers: [UInt64] = []
        for (peer, vector) in acknowledged where peer != local {
            if hubs.contains(peer) { byHub = max(byHub, vector[origin]) }
            byPeers.append(vector[origin])
        }
        guard byPeers.count >= peersRequired else { return byHub }
        byPeers.sort(by: >)
        let byEnough = byPeers[peersRequired - 1]
        precondition(byEnough <= byPeers[0], "sorted in descending order")
        return max(byHub, byEnough)
    }

    /// The highest sequence of each origin that any replica is known to hold: the local vector raised by
    /// every acknowledgement. An op below it that this replica lacks exists somewhere.
    public func known(local localVector: VersionVector) -> VersionVector {
        let members = acknowledged.values.reduce(localVector) { $0.merged(with: $1) }
        return shareAcknowledged.values.reduce(members) { $0.merged(with: $1) }
    }

    /// The peers that acknowledged op `sequence` of `origin`.
    public func acknowledgers(origin: ReplicaID, sequence: UInt64) -> Set<ReplicaID> {
        Set(acknowledged.filter { $0.value.contains(origin: origin, sequence: sequence) }.keys)
    }

    /// How far op `sequence` of `origin` has travelled.
    public func level(origin: ReplicaID, sequence: UInt64, local localVector: VersionVector) -> AcknowledgementLevel {
        if stableFrontier(local: localVector).contains(origin: origin, sequence: sequence) { return .stable }
        let peers = acknowledgers(origin: origin, sequence: sequence).subtracting([local])
        if !peers.isDisjoint(with: hubs) || peers.count >= peersRequired { return .acknowledged }
        return .unacknowledged
    }
}

/// How far a replica may compact (see ``AcknowledgementBook/compactionCap``).
public enum CompactionCap: Sendable, Hashable {
    /// No hub bounds it.
    case unlimited
    /// Up to this stamp, the least its hubs compacted up to.
    case upTo(Stamp)
    /// Not at all: a hub has not compacted yet.
    case nothing

    /// `frontier` lowered to the cap; nil when nothing may be compacted.
    public func capping(_ frontier: Stamp) -> Stamp? {
        switch self {
        case .unlimited: return frontier
        case .upTo(let cap): return min(frontier, cap)
        case .nothing: return nil
        }
    }
}
