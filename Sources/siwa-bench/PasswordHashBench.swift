import Glibc
import Passwords

/// `siwa-bench scrypt [SECONDS]`: today's password hash (`ScryptParameters.current`) on one
/// thread, in a loop: the time of one hash and the memory it holds, one line each
/// (`name value`) for Scripts/bench.
func runPasswordHashBench(duration: Double) throws {
    let parameters = ScryptParameters.current
    var count = 0
    let start = monotonicSeconds()
    while monotonicSeconds() - start < duration || count < 3 {
        _ = try PasswordHasher.derive("correct horse battery staple", parameters: parameters)
        count += 1
    }
    let seconds = monotonicSeconds() - start
    print("scrypt_parameters \(parameters)")
    let perSecond = Double(count) / seconds
    let milliseconds = seconds * 1000 / Double(count)
    let mebibytes = Double(parameters.memoryBytes) / 1_048_576
    print("scrypt_hashes_per_second \(tenths(perSecond))")
    print("scrypt_ms_per_hash \(tenths(milliseconds))")
    print("scrypt_memory_mib \(tenths(mebibytes))")
}

private func tenths(_ value: Double) -> Double {
    (value * 10).rounded() / 10
}

private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
