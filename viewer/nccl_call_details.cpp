#include "nccl_call_details.hpp"

#include <QStringList>

#include <optional>
#include <string>

namespace commlens::viewer {
namespace {

constexpr const char* kTable = "nccl_calls";

std::optional<std::string> link_column(const analysis::Database& database) {
  if (!database.has_table(kTable))
    return std::nullopt;
  for (const char* column : {"mpi_call_id", "call_id"})
    if (database.has_column(kTable, column))
      return column;
  return std::nullopt;
}

} // namespace

bool has_nccl_call_details(const analysis::Database& database) {
  return link_column(database).has_value();
}

QString describe_nccl_call(const analysis::Database& database, std::int64_t call_id) {
  const auto link = link_column(database);
  if (!link)
    return {};
  auto query = database.prepare("SELECT * FROM " + std::string(kTable) + " WHERE " + *link + " = ?1 LIMIT 1");
  query.bind(1, call_id);
  if (!query.step())
    return {};
  QStringList fields;
  for (int column = 0; column < query.column_count(); ++column) {
    const auto name = query.column_name(column);
    const auto value = query.optional_text(column);
    // The link and the rank are the call's own, already in the tooltip.
    if (name == *link || name == "rank" || !value || query.is_blob(column))
      continue;
    fields << QStringLiteral("%1 <b>%2</b>")
                  .arg(QString::fromStdString(name).toHtmlEscaped(),
                       QString::fromStdString(*value).toHtmlEscaped());
  }
  return fields.isEmpty() ? QString() : QStringLiteral("<br>NCCL: ") + fields.join(QStringLiteral(", "));
}

} // namespace commlens::viewer
