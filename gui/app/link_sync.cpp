#include "link_sync.hpp"

namespace linkem::gui {

using proto::Method;

namespace {
// The class an update's keys set, "" for default.
std::string classOf(const proto::LinkUpdate& u) {
    return u.class_name && *u.class_name != kDefaultClassName ? *u.class_name : std::string();
}
bool blank(const proto::LinkUpdate& u) {
    return u.empty() && !u.classes;
}
const std::vector<TrafficClass> kNoClasses;
}  // namespace

LinkSync::LinkSync(Client& client, QObject* parent) : QObject(parent), client_(client) {
    timer_.setSingleShot(true);
    // A coarse timer may fire up to 5 % early; the interval is a promise to linkemd.
    timer_.setTimerType(Qt::PreciseTimer);
    connect(&timer_, &QTimer::timeout, this, &LinkSync::schedule);
}

void LinkSync::reload() {
    client_.call<Method::get_link>({}, this, [this](const proto::LinkState& s) { adopt(s); });
}

void LinkSync::clear() {
    state_.reset();
    pending_ = {};
    in_flight_.reset();
    timer_.stop();
}

const std::vector<TrafficClass>& LinkSync::classes() const {
    return state_ ? state_->link.classes : kNoClasses;
}

bool LinkSync::isPending(int direction, const std::string& key, const std::string& cls) const {
    const std::string c = cls == kDefaultClassName ? std::string() : cls;
    for (const proto::LinkUpdate& u : pending_)
        if (classOf(u) == c && u.has(direction, key)) return true;
    return in_flight_ && classOf(*in_flight_) == c && in_flight_->has(direction, key);
}

bool LinkSync::classesPending() const {
    for (const proto::LinkUpdate& u : pending_)
        if (u.classes) return true;
    return in_flight_ && in_flight_->classes;
}

void LinkSync::setField(int direction, const std::string& key, const FieldValue& value,
                        const std::string& cls) {
    proto::LinkUpdate u;
    u.set(direction, key, value);
    if (!cls.empty() && cls != kDefaultClassName) u.class_name = cls;
    enqueue(std::move(u));
    schedule();
}

void LinkSync::setUpdate(const proto::LinkUpdate& update) {
    enqueue(update);
    schedule();
}

// Keys of the same class as the newest pending update merge into it (newest value wins); a
// class list, or keys of another class, wait behind it in their own update.
void LinkSync::enqueue(proto::LinkUpdate u) {
    if (u.class_name && *u.class_name == kDefaultClassName) u.class_name.reset();
    if (blank(u)) return;
    if (!pending_.empty() && !u.classes && classOf(pending_.back()) == classOf(u)) {
        pending_.back().merge(u);
        return;
    }
    pending_.push_back(std::move(u));
}

void LinkSync::schedule() {
    if (pending_.empty() || in_flight_) return;  // the reply schedules the next
    const qint64 since = since_send_.isValid() ? since_send_.elapsed() : interval_ms_;
    if (since >= interval_ms_)
        sendNow();
    else if (!timer_.isActive())
        timer_.start(static_cast<int>(interval_ms_ - since));
}

void LinkSync::sendNow() {
    if (pending_.empty() || in_flight_) return;
    in_flight_ = std::move(pending_.front());
    pending_.pop_front();
    since_send_.start();
    ++sent_;
    auto done = [this](const proto::LinkState& s) {
        const proto::LinkUpdate update = std::move(*in_flight_);
        in_flight_.reset();
        adopt(s);
        emit accepted(update);
        schedule();
    };
    auto failed = [this](const Failure& f) {
        in_flight_.reset();
        if (f.code == "timeout" || f.code == "disconnected" || f.code == "bad_reply") {
            // Not answered: the client reconnects and reloads what is in force.
            emit unanswered(f.message);
        } else {
            // Nothing changed in linkemd: show the values in force again.
            emit refused(f.field, f.message);
            if (valid()) emit linkChanged(state_->link, state_->params_generation);
        }
        schedule();
    };
    client_.call<Method::set_link>(*in_flight_, this, done, failed);
}

void LinkSync::adopt(const proto::LinkState& s) {
    state_ = s;
    emit linkChanged(state_->link, state_->params_generation);
}

}  // namespace linkem::gui
