import Testing

@_spi(Engine) @testable import Weft

/// The bytes held by connections that have not authenticated stay under a fixed total, however many
/// connections hold how much.
@Suite struct HandshakeBudgetTests {
    final class Connection {}

    @Test func bytesWithinTheReserveNeverDrawOnThePool() {
        var budget = HandshakeBudget(reservedBytes: 4096, sharedBytesMax: 10_000)
        let connections = (0..<1_000).map { _ in Connection() }
        for connection in connections {
            let held = budget.hold(4096, for: ObjectIdentifier(connection))
            #expect(held)
        }
        #expect(budget.sharedBytes == 0)
        #expect(budget.borrowerCount == 0)
    }

    @Test func theTotalBeyondTheReservesNeverPassesThePool() {
        var budget = HandshakeBudget(reservedBytes: 100, sharedBytesMax: 1_000)
        let connections = (0..<50).map { _ in Connection() }
        var refused: [Int] = []
        for (index, connection) in connections.enumerated() {
            if !budget.hold(100 + 300, for: ObjectIdentifier(connection)) { refused.append(index) }
            #expect(budget.sharedBytes <= budget.sharedBytesMax)
        }
        // Three draws of 300 fit in 1,000; every later one is refused and holds nothing.
        #expect(budget.sharedBytes == 900)
        #expect(refused == Array(3..<50))
        #expect(budget.borrowerCount == 3)
        // A connection may grow within what is left, not past it.
        let grew = budget.hold(100 + 400, for: ObjectIdentifier(connections[0]))
        #expect(grew)
        #expect(budget.sharedBytes == 1_000)
        let grewPast = budget.hold(100 + 401, for: ObjectIdentifier(connections[1]))
        #expect(!grewPast)
        #expect(budget.sharedBytes == 700, "the refused connection's draw was returned")
    }

    @Test func whatAConnectionDrewComesBackWhenItGoesOrShrinks() {
        var budget = HandshakeBudget(reservedBytes: 10, sharedBytesMax: 100)
        let first = Connection()
        let second = Connection()
        let firstHeld = budget.hold(110, for: ObjectIdentifier(first))
        #expect(firstHeld)
        let secondHeld = budget.hold(11, for: ObjectIdentifier(second))
        #expect(!secondHeld)
        budget.release(ObjectIdentifier(first))
        #expect(budget.sharedBytes == 0)
        let secondRetried = budget.hold(60, for: ObjectIdentifier(second))
        #expect(secondRetried)
        let shrank = budget.hold(5, for: ObjectIdentifier(second))
        #expect(shrank, "a frame completed: the rest fits the reserve")
        #expect(budget.sharedBytes == 0)
        #expect(budget.borrowerCount == 0)
        budget.release(ObjectIdentifier(second))
        #expect(budget.sharedBytes == 0)
    }
}
