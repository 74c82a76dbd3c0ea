#pragma once
// Runs load_database on a pool thread so the window stays responsive, reports progress through
// queued signals, and can be cancelled. One load at a time: starting another cancels the first.
#include "loaded_database.hpp"

#include <QFutureWatcher>
#include <QObject>

namespace commlens::viewer {

class DatabaseLoader : public QObject {
  Q_OBJECT
public:
  explicit DatabaseLoader(QObject* parent = nullptr);
  ~DatabaseLoader() override;

  void load(const QString& path);
  void cancel();
  bool busy() const { return watcher_.isRunning(); }
  // Blocks until the running load ends (and its signal was sent); for the screenshot mode and tests.
  void wait();

signals:
  void progress(int percent, const QString& step);
  void loaded(std::shared_ptr<const commlens::viewer::LoadedDatabase> database);
  void failed(const QString& path, const QString& reason);
  void cancelled(const QString& path);

private:
  struct Outcome {
    std::shared_ptr<const LoadedDatabase> database;
    QString error; // empty on success
    bool cancelled = false;
  };
  void finish();

  QFutureWatcher<Outcome> watcher_;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  QString path_;
};

} // namespace commlens::viewer
