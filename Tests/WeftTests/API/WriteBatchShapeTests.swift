import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// Every batch call has one shape: what to write first, the node last (`at:`, or `under:` for a push).
/// Before, `increment` and `clear` took the node first, so a batch read three ways.
@Suite struct WriteBatchShapeTests {
    @Test("every batch call takes the node last and they apply together", arguments: ReplicaKind.allCases)
    func everyBatchCallTakesTheNodeLast(kind: ReplicaKind) async throws {
        let fixture = try ReplicaFixture(kind)
        let root = fixture.replica.root
        let order = try root.child("orders/1")
        try await root.child("cart").set(["book": 1])
        try await root.child("stock/book").set(10)
        let receipt = try await fixture.replica.performChanges { batch in
            try batch.set(User(name: "Ada", age: 36), at: order.child("buyer"))
            try batch.set(.raw, ["total": 42], at: order.child("invoice"))
            try batch.merge(with: ["status": "paid"], at: order)
            try batch.merge(.raw, with: ["address/city": "Lyon"], at: order)
            try batch.increment(by: -1, at: root.child("stock/book"))
            try batch.increment(from: 100, by: 5, at: root.child("stock/pen"))
            try batch.push(Message(author: "ada", text: "thanks"), under: order.child("notes"))
            try batch.push(.raw, ["text": "gift wrap"], under: order.child("notes"))
            try batch.clear(at: root.child("cart"))
        }
        #expect(receipt != nil)
        #expect(try await order.child("buyer").decodedValue(as: User.self) == User(name: "Ada", age: 36))
        #expect(try await order.child("invoice/total").value() == 42)
        #expect(try await order.child("status").value() == "paid")
        #expect(try await order.child("address/city").value() == "Lyon")
        #expect(try await root.child("stock/book").value() == 9)
        #expect(try await root.child("stock/pen").value() == 105)
        #expect(try await order.child("notes").childrenKeys().count == 2)
        #expect(try await root.child("cart").value() == .null)
        await fixture.finish()
    }
}
