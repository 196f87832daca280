#include "link_sync.hpp"

namespace linkem::gui {

using proto::Method;

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

bool LinkSync::isPending(int direction, const std::string& key) const {
    return pending_.has(direction, key) || (in_flight_ && in_flight_->has(direction, key));
}

void LinkSync::setField(int direction, const std::string& key, const FieldValue& value) {
    pending_.set(direction, key, value);
    schedule();
}

void LinkSync::setUpdate(const proto::LinkUpdate& update) {
    pending_.merge(update);
    schedule();
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
    in_flight_ = std::exchange(pending_, {});
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
