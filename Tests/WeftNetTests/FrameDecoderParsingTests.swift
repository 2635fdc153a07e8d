import Testing
import WeftCore

@testable import WeftNet

/// Encodes payloads as they go on the wire.
private func encoded(_ payloads: [[UInt8]]) -> [UInt8] {
    var bytes: [UInt8] = []
    for payload in payloads {
        FrameHeader.append(payloadBytes: payload.count, to: &bytes)
        bytes.append(contentsOf: payload)
    }
    return bytes
}

/// Drains every whole frame the decoder holds.
private func drain(_ decoder: inout FrameDecoder) throws -> [[UInt8]] {
    var frames: [[UInt8]] = []
    while let frame = try decoder.nextFrame() {
        frames.append(frame)
    }
    return frames
}

@Suite(.timeLimit(.minutes(1))) struct FrameDecoderParsingTests {
    @Test func aHeaderIsFourBigEndianBytes() {
        var bytes: [UInt8] = []
        FrameHeader.append(payloadBytes: 0x00A1_B2C3, to: &bytes)
        #expect(bytes == [0x00, 0xA1, 0xB2, 0xC3])
        #expect(FrameHeader.payloadBytes(in: bytes, at: 0) == 0x00A1_B2C3)
    }

    @Test func aFrameFedOneByteAtATimeComesOutWholeOnlyOnceComplete() throws {
        let frame = payload(seed: 1, count: 300)
        var decoder = FrameDecoder()
        let bytes = encoded([frame])
        for byte in bytes.dropLast() {
            decoder.append(contentsOf: [byte])
            #expect(try decoder.nextFrame() == nil)
        }
        decoder.append(contentsOf: [bytes[bytes.count - 1]])
        #expect(try decoder.nextFrame() == frame)
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedBytes == 0)
    }

    @Test func severalFramesInOneChunkComeOutInOrder() throws {
        let frames = (1...5).map { payload(seed: $0, count: $0 * 17) }
        var decoder = FrameDecoder()
        decoder.append(contentsOf: encoded(frames))
        #expect(try drain(&decoder) == frames)
    }

    @Test func framesCutAtRandomPointsComeOutUnchanged() throws {
        for seed in 0..<50 {
            var random = SeededGenerator(seed: UInt64(seed))
            let frames = (0..<random.int(in: 1...40)).map { index in
                payload(seed: index + seed, count: random.int(in: 1...2_000))
            }
            let bytes = encoded(frames)
            var decoder = FrameDecoder()
            var decoded: [[UInt8]] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + random.int(in: 1...700))
                decoder.append(contentsOf: bytes[start..<end])
                decoded += try drain(&decoder)
                start = end
            }
            #expect(decoded == frames, "seed \(seed)")
            #expect(decoder.bufferedBytes == 0, "seed \(seed)")
        }
    }

    @Test func anOversizedHeaderIsRefusedBeforeItsPayloadArrives() {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: FrameDecoder.Violation.tooLarge(announcedBytes: UInt32.max)) {
            try decoder.nextFrame()
        }
        var justOver = FrameDecoder()
        var header: [UInt8] = []
        FrameHeader.append(payloadBytes: NetLimits.framePayloadBytesMax, to: &header)
        header[3] &+= 1
        justOver.append(contentsOf: header)
        let announced = UInt32(NetLimits.framePayloadBytesMax + 1)
        #expect(throws: FrameDecoder.Violation.tooLarge(announcedBytes: announced)) {
            try justOver.nextFrame()
        }
    }

    @Test func aHeaderAnnouncingAnEmptyFrameIsRefused() {
        var decoder = FrameDecoder()
        decoder.append(contentsOf: [0, 0, 0, 0, 9])
        #expect(throws: FrameDecoder.Violation.empty) {
            try decoder.nextFrame()
        }
    }

    @Test func aFrameOfTheLargestAllowedSizeIsAccepted() throws {
        let frame = [UInt8](repeating: 0xAB, count: NetLimits.framePayloadBytesMax)
        var decoder = FrameDecoder()
        decoder.append(contentsOf: encoded([frame]))
        let decoded = try decoder.nextFrame()
        #expect(decoded?.count == NetLimits.framePayloadBytesMax)
        #expect(decoded == frame)
    }

    @Test func anUnfinishedFrameStaysBufferedAfterTheFramesBeforeIt() throws {
        let first = payload(seed: 3, count: 10)
        let second = payload(seed: 4, count: 10)
        var decoder = FrameDecoder()
        let bytes = encoded([first, second])
        decoder.append(contentsOf: bytes.dropLast(3))
        #expect(try drain(&decoder) == [first])
        #expect(decoder.bufferedBytes == NetLimits.frameHeaderBytes + second.count - 3)
        decoder.append(contentsOf: bytes.suffix(3))
        #expect(try drain(&decoder) == [second])
    }
}
