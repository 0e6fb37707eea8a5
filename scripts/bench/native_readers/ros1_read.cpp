// The native ROS 1 reader of scripts/bench/native.py: Debian's rosbag_storage (the C++ library
// of ros_comm), every message (or one topic in a window) in time order through rosbag::View,
// each message's bytes copied out (as a reader must to use them). Prints "messages bytes".
//
//   g++ -O2 -std=c++17 ros1_read.cpp -o ros1_read -lrosbag_storage -lroscpp_serialization \
//       -lrostime -lconsole_bridge -lboost_filesystem
//   ros1_read BAG [TOPIC START_OFFSET_S END_OFFSET_S]
#include <rosbag/bag.h>
#include <rosbag/view.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 5) {
    std::cerr << "usage: ros1_read BAG [TOPIC START_OFFSET_S END_OFFSET_S]\n";
    return 2;
  }
  rosbag::Bag bag;
  bag.open(argv[1], rosbag::bagmode::Read);
  std::unique_ptr<rosbag::View> view;
  if (argc == 5) {
    rosbag::View all(bag);
    ros::Time t0 = all.getBeginTime();
    ros::Time start = t0 + ros::Duration(std::atof(argv[3]));
    ros::Time end = t0 + ros::Duration(std::atof(argv[4]));
    view.reset(new rosbag::View(bag, rosbag::TopicQuery(std::string(argv[2])), start, end));
  } else {
    view.reset(new rosbag::View(bag));
  }
  uint64_t n = 0, bytes = 0;
  std::vector<uint8_t> buf;
  for (const rosbag::MessageInstance& m : *view) {
    uint32_t size = m.size();
    buf.resize(size);
    ros::serialization::OStream s(buf.data(), size);
    m.write(s);
    n += 1;
    bytes += size;
  }
  std::cout << n << " " << bytes << std::endl;
  return 0;
}
