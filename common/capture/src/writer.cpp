#include <unistd.h>

#include <array>
#include <system_error>

#include "linkem/capture.hpp"
#include "linkem/link_params.hpp"

namespace linkem::capture {

namespace {
const char* const* const kDirection = kDirectionKeys;
constexpr const char* kApplication = "linkem " LINKEM_CAPTURE_VERSION;
constexpr unsigned kNameSlots = 256;
}  // namespace

struct CaptureWriter::Impl {
    Settings settings;
    unsigned directions;
    std::function<std::string(unsigned, unsigned)> names;
    TimeNs utc_offset;
    std::vector<PcapngFile::Interface> interfaces;
    std::unique_ptr<PcapngFile> file;
    std::uint64_t index = 0;                   // of the current file
    std::uint64_t closed_bytes = 0;            // of the files before the current one
    std::uint64_t closed_records = 0;          // likewise
    std::vector<std::uint64_t> per_interface;  // records in the current file
    TimeNs file_start = 0, file_end = 0;       // UTC of its first and last record
    std::array<std::array<std::string, kNameSlots>, 2> name_cache;
    std::array<std::array<bool, kNameSlots>, 2> named{};
    std::string comment;
    bool rotated = false, closed = false;

    const std::string& class_name(unsigned d, unsigned slot) {
        d &= 1;
        slot %= kNameSlots;
        if (!named[d][slot]) {
            name_cache[d][slot] = names ? names(d, slot) : (slot == 0 ? "default" : "?");
            named[d][slot] = true;
        }
        return name_cache[d][slot];
    }

    void open(std::vector<std::string>& files) {
        const std::string path = ring_file_name(settings.file, index, settings.max_size != 0);
        file = std::make_unique<PcapngFile>(path, interfaces, settings.snaplen, kApplication,
                                            "linkem utc_offset_ns=" + std::to_string(utc_offset));
        files.push_back(path);
        per_interface.assign(interfaces.size(), 0);
        file_start = file_end = 0;
    }

    void finish_file(std::uint64_t missed) {
        const std::uint32_t drops = static_cast<std::uint32_t>(interfaces.size() - 1);
        for (std::uint32_t i = 0; i < interfaces.size(); ++i) {
            const bool last = i == drops;
            std::string c = "linkem capture_missed=" + std::to_string(missed);
            if (last) c += " (records of every interface the writer could not take: ring full)";
            file->statistics(i, file_start, file_end, per_interface[i], last ? missed : 0, c);
        }
        file->flush();
        closed_bytes += file->size();
        closed_records += file->packets_written();
        file.reset();
    }
};

CaptureWriter::CaptureWriter(Settings settings, unsigned directions,
                             std::function<std::string(unsigned, unsigned)> names,
                             TimeNs utc_offset)
    : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.settings = std::move(settings);
    m.directions = directions < 1 ? 1 : (directions > 2 ? 2 : directions);
    m.names = std::move(names);
    m.utc_offset = utc_offset;
    static const char* kSide[2][2] = {{"port A", "port B"}, {"port B", "port A"}};
    for (unsigned d = 0; d < m.directions; ++d) {
        const char* from = kSide[d][0];
        const char* to = m.directions == 1 ? "port A" : kSide[d][1];
        m.interfaces.push_back(
            {std::string(kDirection[d]) + " in",
             std::string("linkem ") + kDirection[d] + ": frames as they arrived at " + from});
        m.interfaces.push_back(
            {std::string(kDirection[d]) + " out",
             std::string("linkem ") + kDirection[d] + ": frames as they left by " + to});
    }
    m.interfaces.push_back({"drops", "linkem: frames the emulator dropped, at the decision"});
    m.open(files_);
}

CaptureWriter::~CaptureWriter() {
    try {
        close(0);
    } catch (...) {
    }
}

void CaptureWriter::write(const RecordHeader& h, const std::uint8_t* frame) {
    Impl& m = *impl_;
    if (m.closed) return;
    const std::uint32_t i = interface_of(h, m.directions);
    const TimeNs utc = h.time_ns + m.utc_offset;
    m.comment.clear();
    append_comment(m.comment, h, m.class_name(h.direction, h.slot), m.utc_offset);
    m.file->packet(i, utc, h.frame_len, {frame, h.cap_len}, m.comment);
    ++m.per_interface[i];
    if (m.file_start == 0 || utc < m.file_start) m.file_start = utc;
    m.file_end = utc > m.file_end ? utc : m.file_end;
    ++records_;
    ++by_point_[h.point == Point::in ? 0 : (h.point == Point::out ? 1 : 2)];
    if (m.settings.max_size != 0 && m.file->size() >= m.settings.max_size) {
        m.finish_file(0);
        ++m.index;
        ++rotations_;
        m.open(files_);
        while (files_.size() > m.settings.files) {
            ::unlink(files_.front().c_str());
            files_.erase(files_.begin());
        }
        m.rotated = true;
    }
}

void CaptureWriter::close(std::uint64_t missed) {
    Impl& m = *impl_;
    if (m.closed) return;
    m.closed = true;
    m.finish_file(missed);
}

void CaptureWriter::flush() {
    if (impl_->file) impl_->file->flush();
}

std::uint64_t CaptureWriter::bytes() const {
    return impl_->closed_bytes + (impl_->file ? impl_->file->size() : 0);
}

std::uint64_t CaptureWriter::records_written() const {
    return impl_->closed_records + (impl_->file ? impl_->file->packets_written() : 0);
}

std::string CaptureWriter::current_file() const {
    return files_.empty() ? std::string() : files_.back();
}

bool CaptureWriter::take_rotated() {
    const bool r = impl_->rotated;
    impl_->rotated = false;
    return r;
}

void CaptureWriter::forget_names() {
    impl_->named = {};
}

}  // namespace linkem::capture
