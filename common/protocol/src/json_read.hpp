// Reading a JSON object the protocol's decoders' way: each read names the dotted path of the
// key at fault ("a_to_b.traffic.sent: expected a whole number >= 0, got -1") in the
// std::invalid_argument it throws. Required reads throw when the key is missing; opt_*
// reads give nullopt. Internal to liblinkem_protocol.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace linkem::json_read {

class Reader {
  public:
    /// `where`: the path of `j` with a trailing dot ("ports.a."), empty at the top.
    Reader(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
        if (!j_.is_object()) fail("", "expected an object, got " + std::string(j_.type_name()));
    }

    bool has(const char* key) const { return j_.contains(key); }
    const nlohmann::json& json() const { return j_; }
    const std::string& where() const { return where_; }

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        std::string path = where_ + key;
        if (!path.empty() && path.back() == '.') path.pop_back();
        throw std::invalid_argument((path.empty() ? std::string("message") : path) + ": " + what);
    }

    const nlohmann::json& need(const char* key) const {
        if (!j_.contains(key)) fail(key, "missing");
        return j_[key];
    }

    std::uint64_t u64(const char* key) const { return as_u64(key, need(key)); }
    std::optional<std::uint64_t> opt_u64(const char* key) const {
        if (!j_.contains(key)) return std::nullopt;
        return as_u64(key, j_[key]);
    }
    std::int64_t i64(const char* key) const { return as_i64(key, need(key)); }
    std::optional<std::int64_t> opt_i64(const char* key) const {
        if (!j_.contains(key)) return std::nullopt;
        return as_i64(key, j_[key]);
    }
    double real(const char* key) const { return as_real(key, need(key)); }
    std::optional<double> opt_real(const char* key) const {
        if (!j_.contains(key)) return std::nullopt;
        return as_real(key, j_[key]);
    }
    bool boolean(const char* key) const { return as_bool(key, need(key)); }
    std::optional<bool> opt_bool(const char* key) const {
        if (!j_.contains(key)) return std::nullopt;
        return as_bool(key, j_[key]);
    }
    std::string str(const char* key) const { return as_str(key, need(key)); }
    std::optional<std::string> opt_str(const char* key) const {
        if (!j_.contains(key)) return std::nullopt;
        return as_str(key, j_[key]);
    }
    /// A nested object.
    Reader object(const char* key) const { return Reader(need(key), where_ + key + "."); }
    std::optional<Reader> opt_object(const char* key) const {
        if (!j_.contains(key)) return std::nullopt;
        return Reader(j_[key], where_ + key + ".");
    }

  private:
    std::uint64_t as_u64(const char* key, const nlohmann::json& v) const {
        if (!v.is_number_unsigned()) fail(key, "expected a whole number >= 0, got " + v.dump());
        return v.get<std::uint64_t>();
    }
    std::int64_t as_i64(const char* key, const nlohmann::json& v) const {
        if (!v.is_number_integer()) fail(key, "expected a whole number, got " + v.dump());
        return v.get<std::int64_t>();
    }
    double as_real(const char* key, const nlohmann::json& v) const {
        if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
        return v.get<double>();
    }
    bool as_bool(const char* key, const nlohmann::json& v) const {
        if (!v.is_boolean()) fail(key, "expected true or false, got " + v.dump());
        return v.get<bool>();
    }
    std::string as_str(const char* key, const nlohmann::json& v) const {
        if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
        return v.get<std::string>();
    }

    const nlohmann::json& j_;
    std::string where_;
};

}  // namespace linkem::json_read
