// The BlobStore backends: local files, an S3 bucket and prefix, memory.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "interloper/blob/blob_store.hpp"
#include "interloper/s3/client.hpp"

namespace interloper::blob {

// Blobs as files under a root directory (names are paths below it). Puts are durable: a
// temporary file beside the target (".NAME.tmp-PID-N"), fsynced, renamed over it, the
// directory fsynced; metadata is not kept. Temporary files are never listed.
std::unique_ptr<BlobStore> local_store(std::filesystem::path root);

// Blobs in memory, metadata kept; for tests and as the reference of the contract.
std::unique_ptr<BlobStore> memory_store();

// Objects PREFIX + NAME in the client's bucket (`prefix` "" or ending with '/'). A put above
// `part_size` bytes goes up as a multipart upload; metadata travels as x-amz-meta-*.
std::unique_ptr<BlobStore> s3_store(std::shared_ptr<detail::S3Client> client, std::string prefix,
                                    std::size_t part_size);

}  // namespace interloper::blob
