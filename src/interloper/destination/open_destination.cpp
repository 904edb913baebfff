// open_destination: locator -> destination. The grammar is the locator's (locator.hpp) and what
// destinations accept of it parse_destination_url's (destination_url.hpp); docs/destinations.md
// lists the accepted forms.
#include "interloper/destination.hpp"
#include "interloper/destination/destination_url.hpp"

namespace interloper {

std::shared_ptr<Destination> open_destination(const Locator& at) {
  DestinationUrl url = parse_destination_url(at);
  switch (url.scheme) {
    case DestinationUrl::Scheme::memory:
      return std::make_shared<MemoryDestination>();
    case DestinationUrl::Scheme::sqlite:
      return std::make_shared<SqliteDestination>(url.path);
    case DestinationUrl::Scheme::file:
      return std::make_shared<FileDestination>(url.path, url.format);
    case DestinationUrl::Scheme::s3:
      return std::make_shared<S3Destination>(std::move(*url.s3));
    case DestinationUrl::Scheme::postgresql:
      return std::make_shared<PostgresDestination>(at.secret_text());
  }
  return nullptr;  // unreachable: every scheme is handled above
}

std::shared_ptr<Destination> open_destination(std::string_view text) {
  return open_destination(parse_destination_url(text).locator);
}

}  // namespace interloper
