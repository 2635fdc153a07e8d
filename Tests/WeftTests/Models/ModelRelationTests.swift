import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// People, tickets and sprints linked with integrity, for the relation tests.
final class Crew: Model {
    override class var collection: String { "crew" }
    @Property var name: String
}

final class Sprint: Model {
    @Property var name: String
    @References var tickets: [Ticket]
    @AssociatedValues var roles: [(key: Crew, value: String)]
}

final class Ticket: Model {
    @Property var title: String
    @Relation var owner: Crew?
    @Relation(onDelete: .cascade) var sprint: Sprint?
}

/// `Relation`, `References` and `AssociatedValues`: links with back-links written in the same op, deletes
/// that nullify or cascade, and the race of a delete and a link on two replicas.
@Suite struct ModelRelationTests {
    /// The link nodes of every stored ticket and sprint, for the integrity check.
    static func links(in state: Value) throws -> [Path] {
        var links: [Path] = []
        for (id, _) in state["tickets"].children {
            links.append(try Path("/tickets/\(id.text)/owner"))
            links.append(try Path("/tickets/\(id.text)/sprint"))
        }
        for (id, sprint) in state["sprints"].children {
            for (entry, _) in sprint["tickets"].children { links.append(try Path("/sprints/\(id.text)/tickets/\(entry.text)")) }
            for (entry, _) in sprint["roles"].children { links.append(try Path("/sprints/\(id.text)/roles/\(entry.text)/key")) }
        }
        return links
    }

    static func expectIntegrity(_ replica: Replica, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let state = replica.snapshot()
        let violations = RelationIntegrity.violations(in: state, links: try links(in: state))
        #expect(violations.isEmpty, "\(violations)", sourceLocation: sourceLocation)
    }

    /// A crew member, a sprint and a ticket in it owned by the member, inserted and linked in one
    /// transaction.
    static func world(in replica: Replica) async throws -> (Crew, Sprint, Ticket) {
        let ann = Crew()
        ann.name = "Ann"
        let sprint = Sprint()
        sprint.name = "S1"
        let ticket = Ticket()
        ticket.title = "Fix the sync"
        let transaction = replica.transaction()
        try ann.insert(in: transaction)
        try sprint.insert(in: transaction)
        ticket.owner = ann
        ticket.sprint = sprint
        try ticket.insert(in: transaction)
        sprint.$tickets.insert(ticket)
        sprint.$roles.set("lead", for: ann)
        try sprint.save(in: transaction)
        try await transaction.commit()
        return (ann, sprint, ticket)
    }

    @Test("links, back-links and keyed entries round-trip through a reopen")
    func roundTripThroughReopen() async throws {
        let fixture = try ReplicaFixture(.sqlite)
        let (ann, sprint, ticket) = try await Self.world(in: fixture.replica)
        let ids = (try #require(ann.id), try #require(sprint.id), try #require(ticket.id))
        try await fixture.reopen()
        let readTicket = try Ticket(id: ids.2, in: fixture.replica)
        let readSprint = try Sprint(id: ids.1, in: fixture.replica)
        #expect(readTicket.owner?.name == "Ann")
        #expect(readTicket.sprint?.id == ids.1)
        #expect(readSprint.tickets.map(\.id) == [ids.2])
        #expect(readSprint.roles.map(\.key.id) == [ids.0])
        #expect(readSprint.$roles[try Crew(id: ids.0, in: fixture.replica)] == "lead")
        // Ann holds the back-links of the ticket's owner and of the sprint's role entry.
        let annValue = fixture.replica.value(at: try Path("/crew/\(ids.0)"))
        #expect(annValue["~in"].children.count == 2)
        try Self.expectIntegrity(fixture.replica)
        await fixture.finish()
    }

    @Test("deleting a target nullifies its nullify links and deletes the sources of its cascade links")
    func nullifyAndCascade() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let (ann, sprint, ticket) = try await Self.world(in: replica)
        let ticketID = try #require(ticket.id)

        // Nullify: the ticket stays, unowned; the sprint's role entry for Ann goes.
        try await replica.performChanges { batch in try ann.delete(in: batch) }
        #expect(try Ticket(id: ticketID, in: replica).owner == nil)
        #expect(try Ticket(id: ticketID, in: replica).title == "Fix the sync")
        #expect(sprint.roles.isEmpty)
        try Self.expectIntegrity(replica)

        // Cascade: deleting the sprint deletes the ticket, which the sprint also listed.
        let transaction = replica.transaction()
        try sprint.delete(in: transaction)
        try await transaction.commit()
        #expect(replica.value(at: try Path("/tickets/\(ticketID)")) == .null)
        #expect(replica.value(at: try Path("/sprints")) == .null)
        try Self.expectIntegrity(replica)
        await fixture.finish()
    }

    @Test("relinking and unlinking move the back-link, and a References entry leaves with its back-link")
    func relinkAndRemove() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let (ann, sprint, ticket) = try await Self.world(in: replica)
        let bob = Crew()
        bob.name = "Bob"
        try await replica.performChanges { batch in try bob.insert(in: batch) }

        try await replica.performChanges { batch in
            ticket.owner = bob
            try ticket.save(in: batch)
        }
        #expect(ticket.owner?.id == bob.id)
        #expect(replica.value(at: try Path("/crew/\(try #require(bob.id))/~in")).children.count == 1)
        #expect(replica.value(at: try Path("/crew/\(try #require(ann.id))/~in")).children.count == 1)  // the role
        try Self.expectIntegrity(replica)

        try await replica.performChanges { batch in
            ticket.owner = nil
            sprint.$tickets.remove(ticket)
            sprint.roles = []
            try ticket.save(in: batch)
            try sprint.save(in: batch)
        }
        #expect(ticket.owner == nil)
        #expect(sprint.tickets.isEmpty)
        #expect(sprint.roles.isEmpty)
        let state = replica.snapshot()
        #expect(state["crew"].children.values.allSatisfy { $0["~in"] == .null })
        #expect(state["tickets"].children.values.allSatisfy { $0["~in"] == .null })
        try Self.expectIntegrity(replica)
        await fixture.finish()
    }

    @Test("a link to an object that is missing or not stored is refused and writes nothing")
    func linkToMissingTarget() async throws {
        let fixture = try ReplicaFixture(.memory)
        let replica = fixture.replica
        let (_, _, ticket) = try await Self.world(in: replica)
        let before = replica.snapshot()
        let ghost = try Crew(id: "ghost", in: replica)
        ticket.owner = ghost
        let missing = await weftErrorCode { try await replica.performChanges { batch in try ticket.save(in: batch) } }
        #expect(missing == .invalidValue)
        let detached = Crew()
        ticket.owner = detached
        let transaction = replica.transaction()
        #expect(throws: WeftError.self) { try ticket.save(in: transaction) }
        #expect(replica.snapshot() == before)
        await fixture.finish()
    }

    @Test("a delete on one replica and a concurrent link on the other converge with integrity", arguments: [false, true])
    func deleteRacesLink(deleteFirst: Bool) async throws {
        let a = try ReplicaFixture(.memory, seed: 1)
        let b = try ReplicaFixture(.memory, seed: 2)
        let (ann, _, ticket) = try await Self.world(in: a.replica)
        let bob = Crew()
        bob.name = "Bob"
        try await a.replica.performChanges { batch in try bob.insert(in: batch) }
        try Self.exchange(a.replica, b.replica)
        let ids = (ann: try #require(ann.id), bob: try #require(bob.id), ticket: try #require(ticket.id))

        // Partitioned: A deletes Bob while B, not having seen it, gives Bob the ticket. The clocks decide
        // which of the two is stamped first.
        a.clock.advance(by: deleteFirst ? 10 : 20)
        b.clock.advance(by: deleteFirst ? 20 : 10)
        let deletion = a.replica.transaction()
        try Crew(id: ids.bob, in: a.replica).delete(in: deletion)
        let deleted = try #require(try await deletion.commit())
        let onB = try Ticket(id: ids.ticket, in: b.replica)
        onB.owner = try Crew(id: ids.bob, in: b.replica)
        let linking = b.replica.transaction()
        try onB.save(in: linking)
        let linked = try #require(try await linking.commit())

        try Self.exchange(a.replica, b.replica)
        #expect(a.replica.digest == b.replica.digest)
        try Self.expectIntegrity(a.replica)
        try Self.expectIntegrity(b.replica)
        // The later of the two had not seen the earlier: it is rejected, and the earlier one stands.
        let later = deleteFirst ? linked : deleted
        #expect(later.status.isRejected)
        let owner = try Ticket(id: ids.ticket, in: a.replica).owner
        if deleteFirst {
            #expect(a.replica.value(at: try Path("/crew/\(ids.bob)")) == .null)
            #expect(owner?.id == ids.ann)
        } else {
            #expect(owner?.id == ids.bob)
            #expect(try Crew(id: ids.bob, in: a.replica).name == "Bob")
        }
        await a.finish()
        await b.finish()
    }

    /// Delivers to each replica the ops of the other it lacks.
    static func exchange(_ a: Replica, _ b: Replica) throws {
        for (from, to) in [(a, b), (b, a), (a, b)] {
            for origin in [a.replicaID, b.replicaID] {
                let ops = from.ops(from: origin, after: to.versionVector[origin], limit: 10_000)
                if !ops.isEmpty { try to.applyRemote(ops) }
            }
        }
    }
}

extension WriteStatus {
    /// True for a rejected write.
    fileprivate var isRejected: Bool {
        if case .rejected = self { return true }
        return false
    }
}
