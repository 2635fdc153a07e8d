import Foundation
import Testing
import WeftCore

@_spi(Engine) @testable import Weft

/// `register` takes a named, documented function type, ``RegisteredFunction``: a new value, or nil to
/// refuse the call (the op is rejected and nothing is written).
@Suite struct ReplicaRegisterTests {
    static let withdraw: RegisteredFunction = { balance, amount in
        guard let cents = balance.intValue, let take = amount.intValue, cents >= take else { return nil }
        return .int(cents - take)
    }

    @Test func aFunctionThatReturnsNilRefusesTheCallAndWritesNothing() async throws {
        let replica = try Replica.inMemory()
        try replica.register(name: "withdraw", version: 1, Self.withdraw)
        let account = try replica.root.child("accounts/ada")
        try await account.set(700)
        try await account.call("withdraw", arguments: 500)
        #expect(try await account.value() == 200)
        let error = await #expect(throws: WeftError.self) { try await account.call("withdraw", arguments: 500) }
        #expect(error?.code == .rejected)
        #expect(try await account.value() == 200, "a refused call writes nothing")
        await replica.shutdown()
    }
}
