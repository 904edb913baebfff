// Internal to the S3 client: the text it sends and reads back, apart from the requests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace interloper::detail::s3_text {

// Base64 of the MD5 of `bytes` (Content-MD5, which DeleteObjects requires).
std::string md5_base64(std::string_view bytes);
// ASCII lower case; surrounding blanks removed.
std::string lower(std::string_view text);
std::string trim(std::string_view text);
// The text of every <tag>...</tag> element in `xml`, in order, and the first one's unescaped
// text ("" when there is none).
std::vector<std::string_view> elements(std::string_view xml, std::string_view tag);
std::string element(std::string_view xml, std::string_view tag);
// `text` with XML's five special characters escaped.
std::string xml_escape(std::string_view text);

}  // namespace interloper::detail::s3_text
