#include "link_sync.hpp"

namespace linkem::gui {

bool linkOf(const nlohmann::json& applied, LinkConfig& out) {
    try {
        out = proto::link_from_json(applied);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

using nlohmann::json;

LinkSync::LinkSync(Client& client, QObject* parent) : QObject(parent), client_(client) {
    timer_.setSingleShot(true);
    // A coarse timer may fire up to 5 % early; the interval is a promise to linkemd.
    timer_.setTimerType(Qt::PreciseTimer);
    connect(&timer_, &QTimer::timeout, this, &LinkSync::schedule);
}

void LinkSync::reload() {
    client_.request("get_link", json::object(), this, [this](const Reply& r) {
        if (r.ok) adopt(r.result);
    });
}

void LinkSync::clear() {
    applied_ = json();
    pending_ = json::object();
    in_flight_ = json();
    timer_.stop();
}

json LinkSync::value(int direction, const std::string& key) const {
    if (!valid()) return json();
    const char* d = kDirectionKeys[direction];
    if (!applied_.contains(d) || !applied_[d].contains(key)) return json();
    return applied_[d][key];
}

bool LinkSync::has(const json& u, int direction, const std::string& key) {
    if (!u.is_object()) return false;
    if (u.contains(key)) return true;
    const char* d = kDirectionKeys[direction];
    return u.contains(d) && u[d].is_object() && u[d].contains(key);
}

bool LinkSync::isPending(int direction, const std::string& key) const {
    return has(pending_, direction, key) || has(in_flight_, direction, key);
}

// Newest wins: a top-level key replaces the per-direction ones given before it; a
// per-direction key wins over an older top-level one by set_link's own rule.
void LinkSync::merge(json& into, const json& update) {
    for (const auto& [k, v] : update.items()) {
        if (direction_of_key(k) >= 0) {
            for (const auto& [kk, vv] : v.items())
                into[k][kk] = vv;
        } else {
            into[k] = v;
            for (const char* d : kDirectionKeys)
                if (into.contains(d)) {
                    into[d].erase(k);
                    if (into[d].empty()) into.erase(d);
                }
        }
    }
}

void LinkSync::setField(int direction, const std::string& key, const json& value) {
    json u = json::object();
    if (direction < 0)
        u[key] = value;
    else
        u[kDirectionKeys[direction]][key] = value;
    merge(pending_, u);
    schedule();
}

void LinkSync::setUpdate(const json& params) {
    merge(pending_, params);
    schedule();
}

void LinkSync::schedule() {
    if (pending_.empty() || !in_flight_.is_null()) return;  // the reply schedules the next
    const qint64 since = since_send_.isValid() ? since_send_.elapsed() : interval_ms_;
    if (since >= interval_ms_)
        sendNow();
    else if (!timer_.isActive())
        timer_.start(static_cast<int>(interval_ms_ - since));
}

void LinkSync::sendNow() {
    if (pending_.empty() || !in_flight_.is_null()) return;
    in_flight_ = std::move(pending_);
    pending_ = json::object();
    since_send_.start();
    ++sent_;
    client_.request("set_link", in_flight_, this, [this](const Reply& r) {
        const json update = std::move(in_flight_);
        in_flight_ = json();
        if (r.ok) {
            adopt(r.result);
            emit accepted(update);
        } else if (r.code == "timeout" || r.code == "disconnected") {
            // Not answered: the client reconnects and reloads what is in force.
            emit unanswered(r.message);
        } else {
            // Nothing changed in linkemd: show the values in force again.
            emit refused(r.field, r.message);
            if (valid()) emit linkChanged(applied_, generation_);
        }
        schedule();
    });
}

void LinkSync::adopt(const json& result) {
    if (!result.is_object() || !result.contains(kDirectionKeys[0])) return;
    json a = json::object();
    for (const char* d : kDirectionKeys)
        if (result.contains(d)) a[d] = result[d];
    applied_ = std::move(a);
    generation_ = result.value("params_generation", std::uint64_t{0});
    emit linkChanged(applied_, generation_);
}

}  // namespace linkem::gui
