import Testing

@_spi(Engine) @testable import Weft

/// Failed authentications from one host are answered later and later (500 wrong handshakes were answered
/// in 0.2 s), in a table of bounded size.
@Suite struct AuthenticationThrottleTests {
    @Test func eachRecentFailureFromAHostDoublesTheWaitUpToTheCap() {
        var throttle = AuthenticationThrottle()
        let base = SyncShellLimits.failedAuthenticationDelayMillisecondsBase
        let cap = SyncShellLimits.failedAuthenticationDelayMillisecondsMax
        let delays = (0..<40).map { throttle.failed(host: "203.0.113.7", now: 1_000 + UInt64($0)) }
        #expect(delays.first == base)
        #expect(delays[1] == 2 * base)
        #expect(delays[2] == 4 * base)
        #expect(delays.last == cap)
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(throttle.failed(host: "198.51.100.1", now: 1_100) == base, "another host starts afresh")
    }

    @Test func aHostIsForgottenAfterAQuietSpellOrAProof() {
        var throttle = AuthenticationThrottle()
        let base = SyncShellLimits.failedAuthenticationDelayMillisecondsBase
        for _ in 0..<5 { _ = throttle.failed(host: "::1", now: 0) }
        let quiet = SyncShellLimits.failedAuthenticationMemoryMilliseconds + 1
        #expect(throttle.failed(host: "::1", now: quiet) == base)
        _ = throttle.failed(host: "::1", now: quiet)
        throttle.succeeded(host: "::1")
        #expect(throttle.failed(host: "::1", now: quiet) == base)
    }

    @Test func theTableHoldsAtMostItsLimitAndDropsTheOldestFirst() {
        var throttle = AuthenticationThrottle(hostsMax: 100)
        for index in 0..<1_000 {
            _ = throttle.failed(host: "10.0.\(index / 256).\(index % 256)", now: UInt64(index))
            #expect(throttle.records.count <= 100)
        }
        #expect(throttle.records.count == 100)
        #expect(throttle.records["10.0.3.231"] != nil, "the latest host is kept")
        #expect(throttle.records["10.0.0.0"] == nil, "the oldest went first")
    }

    @Test(arguments: [
        ("127.0.0.1:5123", "127.0.0.1"), ("[::1]:7700", "::1"), ("[fe80::1]:1", "fe80::1"), ("name", "name"),
    ])
    func theHostOfAnAddressDropsItsPort(address: String, host: String) {
        #expect(AuthenticationThrottle.host(of: address) == host)
    }
}
