import Testing

@testable import WeftStore

@Suite struct StoreLimitsTests {
    @Test func limitsAreOrdered() {
        #expect(StoreLimits.groupCommitOpsMax > 0)
        #expect(StoreLimits.groupCommitOpsMax <= StoreLimits.pendingOpsMax)
    }

    @Test func aPagedQueryCanReturnAWholeGroupCommit() {
        #expect(StoreLimits.opsPerQueryMax >= StoreLimits.groupCommitOpsMax)
    }

    @Test func aLockFileHasRoomForAnyPid() {
        // The largest pid is a 32-bit integer: 11 characters with its sign, plus a newline.
        #expect(StoreLimits.lockFilePidBytesMax >= String(Int32.min).utf8.count + 1)
    }

    @Test func aLoserOfTheLockWaitsLessThanTheBusyTimeoutForThePid() {
        #expect(StoreLimits.lockFilePidReadsMax >= 1)
        let waitMicroseconds = StoreLimits.lockFilePidReadsMax * StoreLimits.lockFilePidReadPauseMicroseconds
        #expect(waitMicroseconds < StoreLimits.busyTimeoutMilliseconds * 1_000)
    }

    @Test func theSmallestDatabaseHoldsSQLitesHeader() {
        // The header is 100 bytes; a page is at least 512.
        #expect(StoreLimits.databaseBytesMin > 100)
        #expect(StoreLimits.databaseBytesMin <= 512)
    }

    @Test func timeoutsCachesAndTokensArePositive() {
        #expect(StoreLimits.busyTimeoutMilliseconds > 0)
        #expect(StoreLimits.pageCacheKibibytes > 0)
        #expect(StoreLimits.instanceTokenBytes >= 16)
        #expect(StoreLimits.memoryUnsyncedCommitsMax > 0)
    }

    @Test func theGroupCommitDelayIsShorterThanTheBusyTimeout() {
        #expect(StoreLimits.groupCommitDelayMillisecondsMax < StoreLimits.busyTimeoutMilliseconds)
    }
}
