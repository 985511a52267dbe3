// What libsdformat (the library Gazebo reads models with) resolves from SDF files.
//
//     g++ -std=c++17 sdf_check.cpp $(pkg-config --cflags --libs sdformat12) -o sdf_check
//     ./sdf_check model.sdf [world.sdf ...]
//
// One JSON object per file on its own line: the load errors, and for every model its
// links (pose in the model frame, inertial: mass, centre-of-mass pose in the link frame,
// moments of inertia about the centre of mass in the inertial frame), joints (type,
// parent and child as written and as resolved to links, pose and axes in the model
// frame, limits, damping, friction), frames (attached-to link, pose in the model frame)
// and plugins (their XML); for every world its gravity and the XML of its physics and
// plugins. The model frame is the world frame here (no model pose is written).
// Used by test/export/test_sdf.py, which compares it with pardyn's pinocchio model.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include <ignition/math/Pose3.hh>
#include <sdf/sdf.hh>

namespace
{
std::string Quote(const std::string &_text)
{
  std::ostringstream out;
  out << '"';
  for (const char c : _text)
  {
    switch (c)
    {
      case '"': out << "\\\""; break;
      case '\\': out << "\\\\"; break;
      case '\n': out << "\\n"; break;
      case '\t': out << "\\t"; break;
      case '\r': break;
      default: out << c;
    }
  }
  out << '"';
  return out.str();
}

std::string Number(double _value)
{
  char buffer[40];
  if (std::isnan(_value)) return "NaN";
  if (std::isinf(_value)) return _value > 0 ? "Infinity" : "-Infinity";
  std::snprintf(buffer, sizeof(buffer), "%.17g", _value);
  return buffer;
}

std::string Vector(const ignition::math::Vector3d &_v)
{
  return "[" + Number(_v.X()) + "," + Number(_v.Y()) + "," + Number(_v.Z()) + "]";
}

// {"position": [x, y, z], "quaternion": [w, x, y, z]}
std::string Pose(const ignition::math::Pose3d &_pose)
{
  const auto &q = _pose.Rot();
  return "{\"position\":" + Vector(_pose.Pos()) + ",\"quaternion\":[" + Number(q.W()) + "," +
         Number(q.X()) + "," + Number(q.Y()) + "," + Number(q.Z()) + "]}";
}

std::string Errors(const sdf::Errors &_errors)
{
  std::string out = "[";
  for (size_t i = 0; i < _errors.size(); ++i)
  {
    std::ostringstream text;
    text << _errors[i];
    out += (i ? "," : "") + Quote(text.str());
  }
  return out + "]";
}

std::string Resolved(const sdf::SemanticPose &_pose, sdf::Errors &_errors)
{
  ignition::math::Pose3d pose;
  const sdf::Errors errors = _pose.Resolve(pose, "__model__");
  _errors.insert(_errors.end(), errors.begin(), errors.end());
  return Pose(pose);
}

std::string ChildrenXml(sdf::ElementPtr _element, const std::string &_name)
{
  std::string out = "[";
  bool first = true;
  if (_element && _element->HasElement(_name))
  {
    for (auto child = _element->GetElement(_name); child; child = child->GetNextElement(_name))
    {
      out += (first ? "" : ",") + Quote(child->ToString(""));
      first = false;
    }
  }
  return out + "]";
}

std::string Axis(const sdf::JointAxis *_axis, sdf::Errors &_errors)
{
  if (!_axis)
    return "null";
  ignition::math::Vector3d xyz;
  const sdf::Errors errors = _axis->ResolveXyz(xyz, "__model__");
  _errors.insert(_errors.end(), errors.begin(), errors.end());
  return "{\"xyz\":" + Vector(xyz) + ",\"lower\":" + Number(_axis->Lower()) + ",\"upper\":" +
         Number(_axis->Upper()) + ",\"effort\":" + Number(_axis->Effort()) + ",\"velocity\":" +
         Number(_axis->MaxVelocity()) + ",\"damping\":" + Number(_axis->Damping()) +
         ",\"friction\":" + Number(_axis->Friction()) + "}";
}

const char *JointType(sdf::JointType _type)
{
  switch (_type)
  {
    case sdf::JointType::BALL: return "ball";
    case sdf::JointType::CONTINUOUS: return "continuous";
    case sdf::JointType::FIXED: return "fixed";
    case sdf::JointType::GEARBOX: return "gearbox";
    case sdf::JointType::PRISMATIC: return "prismatic";
    case sdf::JointType::REVOLUTE: return "revolute";
    case sdf::JointType::REVOLUTE2: return "revolute2";
    case sdf::JointType::SCREW: return "screw";
    case sdf::JointType::UNIVERSAL: return "universal";
    default: return "invalid";
  }
}

std::string Model(const sdf::Model *_model, sdf::Errors &_errors)
{
  std::string out = "{\"name\":" + Quote(_model->Name()) + ",\"links\":[";
  for (uint64_t i = 0; i < _model->LinkCount(); ++i)
  {
    const sdf::Link *link = _model->LinkByIndex(i);
    const auto &inertial = link->Inertial();
    const auto &moi = inertial.MassMatrix().Moi();
    std::string matrix = "[";
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        matrix += (r || c ? "," : "") + Number(moi(r, c));
    out += std::string(i ? "," : "") + "{\"name\":" + Quote(link->Name()) +
           ",\"pose\":" + Resolved(link->SemanticPose(), _errors) +
           ",\"mass\":" + Number(inertial.MassMatrix().Mass()) +
           ",\"inertial_pose\":" + Pose(inertial.Pose()) + ",\"moi\":" + matrix + "]}";
  }
  out += "],\"joints\":[";
  for (uint64_t i = 0; i < _model->JointCount(); ++i)
  {
    const sdf::Joint *joint = _model->JointByIndex(i);
    std::string parentLink, childLink;
    sdf::Errors errors = joint->ResolveParentLink(parentLink);
    _errors.insert(_errors.end(), errors.begin(), errors.end());
    errors = joint->ResolveChildLink(childLink);
    _errors.insert(_errors.end(), errors.begin(), errors.end());
    out += std::string(i ? "," : "") + "{\"name\":" + Quote(joint->Name()) +
           ",\"type\":" + Quote(JointType(joint->Type())) +
           ",\"parent\":" + Quote(joint->ParentLinkName()) +
           ",\"child\":" + Quote(joint->ChildLinkName()) +
           ",\"parent_link\":" + Quote(parentLink) + ",\"child_link\":" + Quote(childLink) +
           ",\"pose\":" + Resolved(joint->SemanticPose(), _errors) +
           ",\"axis\":" + Axis(joint->Axis(0), _errors) +
           ",\"axis2\":" + Axis(joint->Axis(1), _errors) +
           ",\"gearbox_ratio\":" + Number(joint->Element()->Get<double>("gearbox_ratio")) +
           ",\"gearbox_reference_body\":" +
           Quote(joint->Element()->Get<std::string>("gearbox_reference_body")) + "}";
  }
  out += "],\"frames\":[";
  for (uint64_t i = 0; i < _model->FrameCount(); ++i)
  {
    const sdf::Frame *frame = _model->FrameByIndex(i);
    std::string link;
    const sdf::Errors errors = frame->ResolveAttachedToBody(link);
    _errors.insert(_errors.end(), errors.begin(), errors.end());
    out += std::string(i ? "," : "") + "{\"name\":" + Quote(frame->Name()) +
           ",\"attached_to\":" + Quote(frame->AttachedTo()) + ",\"body\":" + Quote(link) +
           ",\"pose\":" + Resolved(frame->SemanticPose(), _errors) + "}";
  }
  out += "],\"plugins\":" + ChildrenXml(_model->Element(), "plugin") + "}";
  return out;
}
}  // namespace

int main(int _argc, char **_argv)
{
  int status = 0;
  for (int a = 1; a < _argc; ++a)
  {
    sdf::Root root;
    sdf::Errors errors = root.Load(_argv[a]);
    std::string models = "[";
    const sdf::Model *single = root.Model();
    if (single)
      models += Model(single, errors);
    models += "]";
    std::string worlds = "[";
    for (uint64_t w = 0; w < root.WorldCount(); ++w)
    {
      const sdf::World *world = root.WorldByIndex(w);
      std::string nested = "[";
      for (uint64_t m = 0; m < world->ModelCount(); ++m)
        nested += (m ? "," : "") + Model(world->ModelByIndex(m), errors);
      worlds += std::string(w ? "," : "") + "{\"name\":" + Quote(world->Name()) +
                ",\"gravity\":" + Vector(world->Gravity()) +
                ",\"physics\":" + ChildrenXml(world->Element(), "physics") +
                ",\"plugins\":" + ChildrenXml(world->Element(), "plugin") +
                ",\"models\":" + nested + "]}";
    }
    worlds += "]";
    if (!errors.empty())
      status = 1;
    std::cout << "{\"file\":" << Quote(_argv[a]) << ",\"sdf_version\":" << Quote(root.Version())
              << ",\"errors\":" << Errors(errors) << ",\"models\":" << models
              << ",\"worlds\":" << worlds << "}" << std::endl;
  }
  return status;
}
