#include "linkem/curve.hpp"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>

#include <zmq.h>

namespace linkem::curve {

namespace fs = std::filesystem;

bool valid_z85_key(const std::string& z) {
    if (z.size() != 40) return false;
    std::array<std::uint8_t, 32> raw{};
    return zmq_z85_decode(raw.data(), z.c_str()) != nullptr;
}

KeyPair generate_key_pair() {
    if (!zmq_has("curve")) throw KeyFileError("this libzmq was built without CURVE");
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0)
        throw KeyFileError(std::string("zmq_curve_keypair failed: ") + zmq_strerror(zmq_errno()));
    return KeyPair{pub, sec};
}

std::string certificate_text(const KeyPair& k, bool with_secret) {
    char when[64];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    std::string t = std::string("#   ****  Generated on ") + when + " by linkemctl keygen  ****\n";
    if (with_secret)
        t += "#   ZeroMQ CURVE **Secret** Certificate\n"
             "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n";
    else
        t += "#   ZeroMQ CURVE Public Certificate\n"
             "#   Exchange securely, or use a secure mechanism to verify the contents\n"
             "#   of this file after exchange.\n";
    t += "\nmetadata\ncurve\n    public-key = \"" + k.public_key + "\"\n";
    if (with_secret) t += "    secret-key = \"" + k.secret_key + "\"\n";
    return t;
}

KeyPair read_certificate(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw KeyFileError(path + ": cannot open the key file: " + std::strerror(errno));
    // The same lines linkemd's server reads: `public-key = "<40 Z85 characters>"`.
    static const std::regex line("^\\s*(public-key|secret-key)\\s*=\\s*\"([^\"]*)\"\\s*$");
    KeyPair k;
    std::string l;
    while (std::getline(in, l)) {
        std::smatch m;
        if (!std::regex_match(l, m, line)) continue;
        const std::string key = m[2].str();
        if (!valid_z85_key(key))
            throw KeyFileError(path + ": " + m[1].str() + " is not a Z85-encoded 32-byte key (" +
                               "40 characters)");
        (m[1] == "public-key" ? k.public_key : k.secret_key) = key;
    }
    if (k.public_key.empty())
        throw KeyFileError(path +
                           ": no public-key = \"...\" line (a ZeroMQ certificate file, as "
                           "`linkemctl keygen` writes, is expected)");
    return k;
}

std::pair<std::string, std::string> write_certificates(const std::string& dir,
                                                       const std::string& name, const KeyPair& keys,
                                                       bool overwrite) {
    if (name.empty() || name.find('/') != std::string::npos)
        throw KeyFileError("key name '" + name + "': expected a file name without '/'");
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw KeyFileError(dir + ": cannot create the directory: " + ec.message());
    const std::string pub = (fs::path(dir) / (name + ".key")).string();
    const std::string sec = pub + "_secret";
    if (!overwrite)
        for (const std::string& p : {pub, sec})
            if (fs::exists(p, ec))
                throw KeyFileError(p + " exists; not overwritten (give --force to replace it)");
    auto write = [&](const std::string& path, const std::string& text, mode_t mode) {
        const std::string tmp = path + ".tmp";
        std::remove(tmp.c_str());
        {
            std::ofstream out(tmp, std::ios::trunc);
            if (!out) throw KeyFileError("cannot write " + tmp + ": " + std::strerror(errno));
            // Restrict before the secret is written.
            if (::chmod(tmp.c_str(), mode) != 0)
                throw KeyFileError("cannot chmod " + tmp + ": " + std::strerror(errno));
            out << text;
            out.flush();
            if (!out) throw KeyFileError("cannot write " + tmp + ": " + std::strerror(errno));
        }
        if (std::rename(tmp.c_str(), path.c_str()) != 0) {
            const std::string why = std::strerror(errno);
            std::remove(tmp.c_str());
            throw KeyFileError("cannot replace " + path + ": " + why);
        }
    };
    write(sec, certificate_text(keys, true), 0600);
    write(pub, certificate_text(KeyPair{keys.public_key, ""}, false), 0644);
    return {pub, sec};
}

}  // namespace linkem::curve
