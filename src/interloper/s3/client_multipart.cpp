// S3Client's multipart uploads: start, upload a part, complete, and abort.
#include <fmt/format.h>

#include <string>

#include "interloper/error.hpp"
#include "interloper/s3/client.hpp"
#include "interloper/s3/client_internal.hpp"
#include "interloper/s3/text.hpp"

namespace interloper::detail {

using s3_text::element;
using s3_text::xml_escape;

std::string S3Client::start_multipart(std::string_view key, const S3Metadata& metadata) {
  Request request{.method = "POST", .key = std::string(key), .query = {{"uploads", ""}}};
  for (const auto& [name, value] : metadata) {
    request.headers.push_back(fmt::format("x-amz-meta-{}: {}", name, value));
  }
  Response response = perform(request);
  if (response.status != 200) fail(request, response);
  std::string id = element(response.body, "UploadId");
  if (id.empty()) {
    throw DestinationError(
        fmt::format("s3 destination: {} gave no upload id for '{}'", describe(), key));
  }
  return id;
}

std::string S3Client::upload_part(std::string_view key, const std::string& upload_id, int number,
                                  std::string_view body) {
  Request request{.method = "PUT",
                  .key = std::string(key),
                  .query = {{"partNumber", std::to_string(number)}, {"uploadId", upload_id}},
                  .body = body};
  Response response = perform(request);
  if (response.status != 200) fail(request, response);
  return response.header("etag");
}

std::string S3Client::complete_multipart(std::string_view key, const std::string& upload_id,
                                         const std::vector<std::string>& etags) {
  std::string body = "<CompleteMultipartUpload>";
  for (std::size_t i = 0; i < etags.size(); ++i) {
    body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1,
                        xml_escape(etags[i]));
  }
  body += "</CompleteMultipartUpload>";
  Request request{
      .method = "POST", .key = std::string(key), .query = {{"uploadId", upload_id}}, .body = body};
  Response response = perform(request);
  // S3 may report a failed completion inside a 200 answer.
  if (response.status != 200 || !element(response.body, "Code").empty()) fail(request, response);
  return unquoted(element(response.body, "ETag"));
}

void S3Client::abort_multipart(std::string_view key, const std::string& upload_id) noexcept {
  try {
    Request request{
        .method = "DELETE", .key = std::string(key), .query = {{"uploadId", upload_id}}};
    perform(request);
  } catch (...) {
    // Best effort: an upload never completed stays invisible; the store expires it.
  }
}

}  // namespace interloper::detail
